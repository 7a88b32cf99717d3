"""Running one command with thatch's error policy. Shared by the Typer
path and the fast path, and free of Typer itself."""

from __future__ import annotations

from ..ops.context import Context
from ..support.errors import EXIT_INTERNAL, ThatchError, database_error, os_error
from . import waiting
from .output import Output

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    Command = Callable[..., "int | None"]


def run(command: Command, ctx: Context, params: dict[str, Any]) -> int:
    """Call `command(ctx, out, **params)`; a ThatchError becomes one line (or
    one JSON object) and its exit code, never a traceback. Returns the exit code."""
    out = Output(json_mode=bool(params.get("as_json")), env=ctx.env, stdout=ctx.stdout, stderr=ctx.stderr)
    if ctx.indicator is None and waiting.wanted(out.stderr, ctx.env, out.json_mode):
        ctx.indicator = lambda message: waiting.Spinner(out.stderr, message)
    try:
        code = command(ctx, out, **with_fields(with_store(params)))
        return int(code or 0)
    except ThatchError as err:
        out.error(err)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        known = database_error(exc, _database(ctx)) or _device_error(exc)
        if known is not None:
            out.error(known)
            return known.exit_code
        if ctx.env.get("THATCH_DEBUG"):
            raise
        # A bug: still one line, with a way to see more.
        out.error(ThatchError(f"internal error: {type(exc).__name__}: {exc} (set THATCH_DEBUG=1 for a traceback)"))
        return EXIT_INTERNAL
    finally:
        ctx.close()


def _database(ctx: Context) -> Path | None:
    try:
        return ctx.db_path
    except ThatchError:
        return None


def _device_error(exc: Exception) -> ThatchError | None:
    """Output that cannot be written for want of space (or a failing
    device): exit 6, not a bug."""
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG):
        return os_error(exc, "the output")
    return None


def with_store(params: dict[str, Any]) -> dict[str, Any]:
    """The store however it was named, as `store`: --global (cli/app.py adds
    it beside every --store) is store="global", and a positional STORE (the
    original thatch's habit, declared with StoreArg) is merged in."""
    if "global_store" not in params and "store_arg" not in params:
        return params
    from ..support.errors import InvalidInput

    params = dict(params)
    if params.pop("global_store", False):
        if params.get("store") not in (None, "global"):
            raise InvalidInput("use either --store or --global, not both")
        params["store"] = "global"
    positional = params.pop("store_arg", None)
    if positional is not None:
        if params.get("store") not in (None, positional):
            raise InvalidInput("give the store either as an argument or with --store/--global, not both")
        params["store"] = positional
    return params


def with_fields(params: dict[str, Any]) -> dict[str, Any]:
    """The options that stand for declared fields (cli/declare.py
    field_options: `filtered_pinned`, `given_tags`, ...) gathered back into the
    dict the command declared (`filtered`, `given`): field name -> value, for
    the options given only."""
    from .declare import FIELD_ROLES

    if not any(name.partition("_")[0] in FIELD_ROLES for name in params):
        return params
    params = dict(params)
    for role in FIELD_ROLES:
        prefix = role + "_"
        taken = {name[len(prefix):]: params.pop(name) for name in list(params) if name.startswith(prefix)}
        if taken:
            params[role] = {name: value for name, value in taken.items() if value}
    return params
