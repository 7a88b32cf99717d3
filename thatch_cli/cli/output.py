"""Where command output goes: one JSON document for agents, rich tables on
a terminal (without colour under NO_COLOR), plain text everywhere else
(pipes, TERM=dumb): the same columns, tab-separated.

Every line for people passes through textsafe.visible, so text stored by
anyone (labels, content, branch and store names) never sends a control
sequence to the terminal; JSON keeps the exact text.
"""

from __future__ import annotations

import sys

from ..errors import ThatchError
from ..textsafe import visible

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any


def wants_rich(stream: IO[str], env: Mapping[str, str]) -> bool:
    """Tables on a terminal; NO_COLOR (https://no-color.org) only takes the
    colour out of them (see Output.console)."""
    if env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Output:
    def __init__(self, *, json_mode: bool, env: Mapping[str, str], stdout: IO[str] | None = None,
                 stderr: IO[str] | None = None) -> None:
        self.json_mode = json_mode
        self.env = env
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.rich = not json_mode and wants_rich(self.stdout, env)
        self.rich_stderr = wants_rich(self.stderr, env)
        self._console = None

    @property
    def console(self):
        """A rich console, only ever built on a terminal (rich costs ~40 ms to import)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stdout, highlight=False, no_color=bool(self.env.get("NO_COLOR")))
        return self._console

    @staticmethod
    def dumps(payload: Any, *, compact: bool = False) -> str:
        """Exactly what json() writes (recall's --budget measures it)."""
        import json  # only --json pays for it (json imports re)

        if compact:
            return json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n"
        return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"

    def json(self, payload: Any, *, compact: bool = False) -> None:
        self.stdout.write(self.dumps(payload, compact=compact))

    def line(self, text: str = "") -> None:
        self.stdout.write(visible(text) + "\n")

    def lines(self, texts: list[str]) -> None:
        """Many lines in one write (a 10k-row listing stays cheap)."""
        if texts:
            self.stdout.write(visible("\n".join(texts)) + "\n")

    def notice(self, text: str) -> None:
        """Side information (warnings, degraded modes): stderr, so stdout stays parseable."""
        self.stderr.write(f"thatch: {visible(text, keep='')}\n")

    def error(self, err: ThatchError) -> None:
        """One line: on stderr for people; with --json, one compact JSON
        object on stdout (where an agent reads the result it expected)."""
        if self.json_mode:
            self.json({"error": err.to_json()}, compact=True)
        else:
            self.stderr.write(f"thatch: error: {visible(err.message, keep='')}\n")

