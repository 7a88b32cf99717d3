"""Where command output goes: one JSON document for agents, rich tables on
a terminal (without colour under NO_COLOR), plain text everywhere else
(pipes, TERM=dumb): the same columns, tab-separated.

Every line for people passes through textsafe.visible, so text stored by
anyone (labels, content, branch and store names) never sends a control
sequence to the terminal; JSON keeps the exact text.
"""

from __future__ import annotations

import sys

from ..support.errors import ThatchError
from ..support.textsafe import visible

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

    from rich.console import Console


def wants_rich(stream: IO[str], env: Mapping[str, str]) -> bool:
    """Tables on a terminal (not with TERM=dumb); NO_COLOR only takes the
    colour out of them (wants_color)."""
    if env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def wants_color(stream: IO[str], env: Mapping[str, str]) -> bool:
    """Colour on a terminal unless NO_COLOR is set and not empty (https://no-color.org)."""
    return not env.get("NO_COLOR") and wants_rich(stream, env)


def terminal_width(stream: IO[str], env: Mapping[str, str]) -> int:
    """The terminal's width in columns: COLUMNS when set (as for ls and
    less), else the window's, else 80."""
    columns = env.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    import os

    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class Output:
    def __init__(self, *, json_mode: bool, env: Mapping[str, str], stdout: IO[str] | None = None,
                 stderr: IO[str] | None = None) -> None:
        self.json_mode = json_mode
        self.env = env
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        # A terminal gets tables (in colour unless NO_COLOR); pipes and TERM=dumb get tab-separated lines.
        self.rich = not json_mode and wants_rich(self.stdout, env)
        self.color = self.rich and wants_color(self.stdout, env)
        self.rich_stderr = wants_rich(self.stderr, env)
        self._console: Console | None = None
        self._width: int | None = None

    @property
    def width(self) -> int:
        """Columns a line on stdout may take."""
        if self._width is None:
            self._width = terminal_width(self.stdout, self.env)
        return self._width

    @property
    def console(self) -> Console:
        """A rich console, only ever built on a terminal (rich costs ~40 ms to import)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stdout, highlight=False, no_color=not self.color)
        return self._console

    @staticmethod
    def dumps(payload: Any, *, compact: bool = False) -> str:
        """Exactly what json() writes (recall's --budget measures it): the
        exact data, with no character a terminal would act on (textsafe.json_safe)."""
        import json  # only --json pays for it (json imports re)

        from ..support.textsafe import json_safe

        if compact:
            return json_safe(json.dumps(payload, ensure_ascii=False, separators=(",", ":"))) + "\n"
        return json_safe(json.dumps(payload, ensure_ascii=False, indent=2)) + "\n"

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

