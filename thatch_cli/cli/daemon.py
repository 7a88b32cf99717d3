"""`thatch daemon start | stop | status`: the background process that keeps
the embedding model loaded (daemon/)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

from ..ops.context import Context
from ..support.errors import InvalidInput, ModelUnavailable, ThatchError
from .declare import Json, command, group
from .output import Output

DAEMON = group("daemon", "The background process that keeps the embedding model loaded (started automatically).")

STATUS_KEYS = ("pid", "model", "version", "ready", "model_error", "dim", "started_at", "uptime_seconds",
               "rss_bytes", "requests", "hooks_answered", "idle_timeout_seconds", "cached_stores", "cached_vectors", "cache_loads",
               "cache_patches", "socket")


def _client(ctx: Context, autostart: bool = True):
    from ..daemon.client import Client

    return Client(ctx.env, autostart=autostart)


@contextmanager
def _unreachable(doing: str) -> Iterator[None]:
    """A daemon that cannot be reached is one line: `doing`, and why."""
    from ..daemon.client import Unreachable

    try:
        yield
    except Unreachable as exc:
        raise ThatchError(f"{doing}: {exc}") from None


def _socket_path(ctx: Context) -> str:
    from ..daemon import runtime

    return os.path.join(runtime.runtime_dir(ctx.env), runtime.SOCKET)


@command("start", group=DAEMON, examples=["thatch daemon start", "thatch daemon start --json"],
         json="action, running, and the keys of daemon status")
def daemon_start(ctx: Context, out: Output, *, as_json: Json = False) -> None:
    """Start the daemon (if needed) and wait until its model is loaded."""
    from ..daemon.client import Unreachable
    from ..daemon.protocol import ErrorReply

    if not ctx.setting("daemon.enabled"):
        from ..support.settings import origin

        raise InvalidInput(f"the daemon is disabled by {origin(ctx.env, 'daemon.enabled')}")
    client = _client(ctx)
    try:
        before = client.status()
        client.call("info")  # starts or replaces it, and waits for the model
    except Unreachable as exc:
        raise ThatchError(f"cannot start the daemon: {exc}") from None
    except ErrorReply as exc:
        if exc.code == "model_unavailable":
            raise ModelUnavailable(f"the daemon cannot load the model: {exc.message}") from None
        raise ThatchError(f"the daemon failed: {exc.message}") from None
    finally:
        client.close()
    status = client.status()
    same = before is not None and status is not None and before.get("pid") == status.get("pid")
    _status(out, status, _socket_path(ctx), action="already-running" if same else "started")


@command("stop", group=DAEMON, examples=["thatch daemon stop"], json="stopped, pid")
def daemon_stop(ctx: Context, out: Output, *, as_json: Json = False) -> None:
    """Stop the daemon; the next command that needs a vector starts it again."""
    with _unreachable("cannot stop the daemon"):
        stopped = _client(ctx, autostart=False).stop()
    if out.json_mode:
        out.json({"stopped": stopped is not None, "pid": (stopped or {}).get("pid")})
    elif stopped is None:
        out.line("The thatch daemon was not running")
    else:
        out.line(f"Stopped the thatch daemon (pid {stopped.get('pid')})")


@command("status", group=DAEMON, examples=["thatch daemon status", "thatch daemon status --json | jq .rss_bytes"],
         json="running, " + ", ".join(STATUS_KEYS))
def daemon_status(ctx: Context, out: Output, *, as_json: Json = False) -> None:
    """Show pid, model, thatch version, uptime, resident memory, requests served and hooks answered."""
    with _unreachable("cannot reach the daemon"):
        status = _client(ctx, autostart=False).status()
    _status(out, status, _socket_path(ctx))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h {minutes}m"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"


def _megabytes(value: int | None) -> str:
    return "-" if value is None else f"{value / (1024 * 1024):.0f} MiB"


def status_payload(status: dict | None, socket_path: str) -> dict:
    if status is None:
        return {"running": False, "socket": socket_path}
    return {"running": True, **{key: status.get(key) for key in STATUS_KEYS}}


def _status(out: Output, status: dict | None, socket_path: str, *, action: str | None = None) -> None:
    payload = status_payload(status, socket_path)
    if out.json_mode:
        out.json({**({"action": action} if action else {}), **payload})
        return
    if action == "started":
        out.line(f"Started the thatch daemon (pid {payload.get('pid')})")
    elif action == "already-running":
        out.line(f"The thatch daemon is already running (pid {payload.get('pid')})")
    if not payload["running"]:
        out.line("The thatch daemon is not running")
        return
    if action is None:
        out.line(f"The thatch daemon is running (pid {payload['pid']})")
    state = "ready" if payload["ready"] and not payload["model_error"] else (
        f"unavailable: {payload['model_error']}" if payload["model_error"] else "loading")
    cache = f"{payload['cached_stores'] or 0} stores, {payload['cached_vectors'] or 0:,} vectors"
    for name, value in (
        ("model", f"{payload['model']} ({state})"),
        ("version", f"thatch {payload['version']}"),
        ("uptime", _duration(payload["uptime_seconds"])),
        ("memory", f"{_megabytes(payload['rss_bytes'])} resident"),
        ("requests", str(payload["requests"])),
        ("hooks", f"{payload['hooks_answered'] or 0} answered for the agent hooks' processes"),
        ("cache", cache),
        ("idle exit", _duration(payload["idle_timeout_seconds"])),
        ("socket", payload["socket"]),
    ):
        out.line(f"  {name:<10}{value}")
