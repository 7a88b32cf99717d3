"""Running one command implementation with thatch's error policy. Shared by
the Typer CLI and the fast dispatcher, and free of Typer itself."""

from __future__ import annotations

from typing import Any, Callable

from .context import Context
from .errors import EXIT_INTERNAL, ThatchError
from .output import Output

Impl = Callable[..., None]


def run(impl: Impl, ctx: Context, params: dict[str, Any]) -> int:
    """Call `impl(ctx, out, **params)`; a ThatchError becomes one line (or one
    JSON object) and its exit code, never a traceback. Returns the exit code."""
    out = Output(json_mode=bool(params.get("as_json")), env=ctx.env)
    try:
        code = impl(ctx, out, **params)
        return int(code or 0)
    except ThatchError as err:
        out.error(err)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: still one line, with a way to see more
        if ctx.env.get("THATCH_DEBUG"):
            raise
        out.error(ThatchError(f"internal error: {type(exc).__name__}: {exc} (set THATCH_DEBUG=1 for a traceback)"))
        return EXIT_INTERNAL
    finally:
        ctx.close()
