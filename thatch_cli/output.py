"""Where command output goes: JSON for agents, rich tables on a terminal,
plain text everywhere else (pipes, NO_COLOR, TERM=dumb)."""

from __future__ import annotations

import json
import sys
from typing import IO, Any, Mapping

from .errors import ThatchError


def wants_rich(stream: IO[str], env: Mapping[str, str]) -> bool:
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Output:
    def __init__(self, *, json_mode: bool, env: Mapping[str, str], stdout: IO[str] | None = None,
                 stderr: IO[str] | None = None) -> None:
        self.json_mode = json_mode
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

            self._console = Console(file=self.stdout, highlight=False)
        return self._console

    @staticmethod
    def dumps(payload: Any) -> str:
        """Exactly what json() writes (recall's --budget measures it)."""
        return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"

    def json(self, payload: Any) -> None:
        self.stdout.write(self.dumps(payload))

    def line(self, text: str = "") -> None:
        self.stdout.write(text + "\n")

    def notice(self, text: str) -> None:
        """Side information (warnings, degraded modes): stderr, so stdout stays parseable."""
        self.stderr.write(f"thatch: {text}\n")

    def error(self, err: ThatchError) -> None:
        if self.json_mode:
            self.json({"error": {"code": err.code, "message": err.message, "exit_code": err.exit_code,
                                 **_jsonable(err.details)}})
        else:
            self.stderr.write(f"thatch: error: {err.message}\n")


def _jsonable(details: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v if isinstance(v, (str, int, float, bool, type(None), list)) else str(v) for k, v in details.items()}
