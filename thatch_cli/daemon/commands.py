"""Command bodies of the daemon area: `daemon start|stop|status`, `export`
and `import`. Typer-free (the fast dispatcher calls them directly); the
declarations live in cli_daemon.py."""

from __future__ import annotations

import os
import sys

from .. import render_daemon
from ..context import Context
from ..errors import EXIT_ATTENTION, InvalidInput, ModelUnavailable, ThatchError
from ..output import Output


def _client(ctx: Context, autostart: bool = True):
    from .client import Client

    return Client(ctx.env, autostart=autostart)


def _socket_path(ctx: Context) -> str:
    from . import runtime

    return os.path.join(runtime.runtime_dir(ctx.env), runtime.SOCKET)


def daemon_start(ctx: Context, out: Output, *, as_json: bool) -> None:
    from . import runtime
    from .client import RemoteError, Unreachable

    if runtime.disabled(ctx.env):
        raise InvalidInput("the daemon is disabled by THATCH_DAEMON=0")
    client = _client(ctx)
    try:
        before = client.status()
        client.call("info")  # starts or replaces it, and waits for the model
    except Unreachable as exc:
        raise ThatchError(f"cannot start the daemon: {exc}") from None
    except RemoteError as exc:
        if exc.code == "model_unavailable":
            raise ModelUnavailable(f"the daemon cannot load the model: {exc.message}") from None
        raise ThatchError(f"the daemon failed: {exc.message}") from None
    finally:
        client.close()
    status = client.status()
    same = before is not None and status is not None and before.get("pid") == status.get("pid")
    render_daemon.daemon_status(out, status, _socket_path(ctx), action="already-running" if same else "started")


def daemon_stop(ctx: Context, out: Output, *, as_json: bool) -> None:
    from .client import Unreachable

    try:
        stopped = _client(ctx, autostart=False).stop()
    except Unreachable as exc:
        raise ThatchError(f"cannot stop the daemon: {exc}") from None
    render_daemon.daemon_stopped(out, stopped)


def daemon_status(ctx: Context, out: Output, *, as_json: bool) -> None:
    from .client import Unreachable

    try:
        status = _client(ctx, autostart=False).status()
    except Unreachable as exc:
        raise ThatchError(f"cannot reach the daemon: {exc}") from None
    render_daemon.daemon_status(out, status, _socket_path(ctx))


def export(ctx: Context, out: Output, *, store: str | None, all_stores: bool, with_vectors: bool,
           output: str | None, as_json: bool) -> None:
    from .. import transfer

    if as_json and not output:
        raise InvalidInput("--json needs --output FILE (without it, the JSONL export itself goes to stdout)")
    stores = transfer.export_stores(ctx, store, all_stores)
    if output and output != "-":
        outcome = transfer.export_to_file(ctx, output, stores, with_vectors=with_vectors)
    else:
        outcome = transfer.export(ctx, out.stdout, stores, with_vectors=with_vectors)
        out.stdout.flush()
        if not out.rich_stderr:
            return  # stdout is the data; stay quiet unless a person watches stderr
    render_daemon.exported(out, outcome)


def import_(ctx: Context, out: Output, *, source: str, overwrite: bool, store: str | None,
            as_json: bool) -> int:
    from .. import transfer

    total = None
    if source == "-":
        if sys.stdin is None or sys.stdin.closed:
            raise InvalidInput("no standard input to read")
        stream = sys.stdin
    else:
        total = transfer.count_lines(source)
        try:
            stream = open(source, encoding="utf-8", errors="replace", newline="\n")
        except OSError as exc:
            raise InvalidInput(f"cannot read {source}: {exc.strerror or exc}") from None
    progress = None
    if out.rich_stderr and not out.json_mode:
        from ..progress import ProgressBar

        progress = ProgressBar("Importing")
    try:
        outcome = transfer.import_lines(ctx, stream, overwrite=overwrite, store=store,
                                        progress=progress, total=total)
    finally:
        if progress:
            progress.close()
        if stream is not sys.stdin:
            stream.close()
    render_daemon.imported(out, outcome)
    return EXIT_ATTENTION if outcome.error_count else 0

