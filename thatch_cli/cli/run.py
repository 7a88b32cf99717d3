"""Running one command with thatch's error policy. Shared by the Typer
path and the fast path, and free of Typer itself."""

from __future__ import annotations

from typing import Any, Callable

from ..context import Context
from ..errors import EXIT_INTERNAL, ThatchError, database_error
from . import waiting
from .output import Output

Command = Callable[..., "int | None"]


def run(command: Command, ctx: Context, params: dict[str, Any]) -> int:
    """Call `command(ctx, out, **params)`; a ThatchError becomes one line (or
    one JSON object) and its exit code, never a traceback. Returns the exit code."""
    out = Output(json_mode=bool(params.get("as_json")), env=ctx.env, stdout=ctx.stdout, stderr=ctx.stderr)
    if ctx.indicator is None and waiting.wanted(out.stderr, ctx.env, out.json_mode):
        ctx.indicator = lambda message: waiting.Spinner(out.stderr, message)
    try:
        code = command(ctx, out, **with_global(params))
        return int(code or 0)
    except ThatchError as err:
        out.error(err)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        err = database_error(exc)
        if err is not None:
            out.error(err)
            return err.exit_code
        if ctx.env.get("THATCH_DEBUG"):
            raise
        # A bug: still one line, with a way to see more.
        out.error(ThatchError(f"internal error: {type(exc).__name__}: {exc} (set THATCH_DEBUG=1 for a traceback)"))
        return EXIT_INTERNAL
    finally:
        ctx.close()


def with_global(params: dict[str, Any]) -> dict[str, Any]:
    """--global (cli/app.py adds it beside every --store) as store="global"."""
    if "global_store" not in params:
        return params
    params = dict(params)
    if params.pop("global_store"):
        if params.get("store") not in (None, "global"):
            from ..errors import InvalidInput

            raise InvalidInput("use either --store or --global, not both")
        params["store"] = "global"
    return params
