"""Entry point. Machine-facing hot paths (shell and git hooks, completion)
and well-formed commands run without importing Typer; help, errors in the
command line and anything unusual go to the Typer CLI."""

from __future__ import annotations

import os
import sys

# Internal entry points for hooks and completion: "_name" -> module with main(argv) -> int.
HOT_COMMANDS: dict[str, str] = {
    "_hook": "thatch_cli.hot.prompt",  # shell prompt hook: one-line summary
    "_githook": "thatch_cli.hot.githook",  # post-checkout, reference-transaction
    "_complete": "thatch_cli.hot.complete",  # labels and stores for shell completion
}


def main() -> None:
    argv = sys.argv[1:]
    if argv and argv[0] in HOT_COMMANDS:
        import importlib

        sys.exit(importlib.import_module(HOT_COMMANDS[argv[0]]).main(argv[1:]))
    if argv in (["--version"], ["-V"]):
        from . import __version__

        print(f"thatch {__version__}")
        sys.exit(0)
    if os.environ.get("THATCH_FASTPATH") != "0":
        from .fastpath import dispatch

        code = dispatch(argv)
        if code is not None:
            sys.exit(code)
    from .cli import app

    app(prog_name="thatch")


if __name__ == "__main__":
    main()
