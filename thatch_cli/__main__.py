"""Entry point. Machine-facing hot paths (shell and git hooks, completion)
are dispatched before Typer is imported; everything else goes to the CLI."""

from __future__ import annotations

import sys


def main() -> None:
    from .cli import app

    app(prog_name="thatch")


if __name__ == "__main__":
    main()
