"""The `thatch` entry point.

Machine-facing hot paths (shell and git hooks, completion) go straight to
their modules; well-formed commands run through the fast path without
importing Typer; help, errors in the command line and anything unusual go
to the Typer app. `run(argv, ctx)` is the whole of it, in-process, so tests
drive exactly what users run.
"""

from __future__ import annotations

import os
import sys

# Machine-facing entry points: name -> "module" (its main) or "module:function",
# called with the rest of argv, returning the exit code. The agent hooks keep
# the original thatch's command names, so its host configurations work.
HOT_COMMANDS: dict[str, str] = {
    "_hook": "thatch_cli.hot.prompt",  # the shell hook: one-line summary
    "_githook": "thatch_cli.hot.githook",  # post-checkout, reference-transaction
    "_complete": "thatch_cli.hot.complete",  # labels, stores and branches for shell completion
    "reminder": "thatch_cli.hot.reminder",  # agent session start: memory context block
    "flush-tools": "thatch_cli.hot.relay:flush_tools",  # every agent prompt: extraction or recall nudge
    "flush-predictions": "thatch_cli.hot.rules",  # the learned preferences a prompt fires, alone
    "buffer-batch": "thatch_cli.hot.buffer:batch_main",  # Claude Code PostToolBatch: queue tool calls
    "buffer-tool": "thatch_cli.hot.buffer:tool_main",  # Cursor / Codex post-tool: queue one call
    "_daemon": "thatch_cli.hot.served",  # the daemon process, running the relayed hooks (daemon/runtime.spawn)
}


def run(argv: list[str], ctx=None) -> int:
    """Run one command line and return its exit code. `ctx` (a Context)
    replaces the real process's environment, directory and streams."""
    if argv and argv[0] in HOT_COMMANDS:
        import importlib

        module, _, function = HOT_COMMANDS[argv[0]].partition(":")
        return getattr(importlib.import_module(module), function or "main")(argv[1:])
    if ctx is None and argv[:1] == ["mcp"]:
        # A host waits only so long for a server's first answer: plain
        # `thatch mcp` goes straight to it (mcp/handshake.py); the rest below.
        from .mcp.handshake import main as mcp

        code = mcp(argv[1:])
        if code is not None:
            return code
    if ctx is None:
        from .ops.context import Context

        ctx = Context.from_process()
    undecodable = _undecodable(argv)
    if undecodable is not None:
        from .cli.output import Output
        from .support.errors import InvalidInput

        err = InvalidInput(f"argument {undecodable + 1} ({os.fsencode(argv[undecodable])!r}) is not valid UTF-8")
        Output(json_mode="--json" in argv, env=ctx.env, stdout=ctx.stdout, stderr=ctx.stderr).error(err)
        return err.exit_code
    if argv in (["--version"], ["-V"], ["-v"]):
        from . import __version__

        (ctx.stdout or sys.stdout).write(f"thatch {__version__}\n")
        return 0
    if ctx.env.get("THATCH_FASTPATH") != "0":
        from .cli.fastpath import dispatch

        code = dispatch(argv, ctx)
        if code is not None:
            return code
    from .cli.app import main as typer_main

    return typer_main(argv, ctx)


def _undecodable(argv: list[str]) -> int | None:
    """The index of the first argument that was not valid UTF-8 (Python
    hands those over with lone surrogates standing for the bad bytes)."""
    for index, arg in enumerate(argv):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return index
    return None


def main() -> None:
    try:
        code = run(sys.argv[1:])
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`thatch list | head -1`): what it wanted it has.
        # Point stdout at /dev/null so the interpreter's last flush cannot fail too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 0
    sys.exit(code)


if __name__ == "__main__":
    main()
