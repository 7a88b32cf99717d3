"""How the daemon area's results look (daemon start|stop|status, export,
import): a stable JSON payload, and the same facts for people."""

from __future__ import annotations

from .output import Output

STATUS_KEYS = ("pid", "model", "version", "ready", "model_error", "dim", "started_at", "uptime_seconds",
               "rss_bytes", "requests", "idle_timeout_seconds", "cached_stores", "cached_vectors", "cache_loads", "cache_patches", "socket")


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
    return "-" if value is None else f"{value / (1024 * 1024):.0f} MB"


def status_payload(status: dict | None, socket_path: str) -> dict:
    if status is None:
        return {"running": False, "socket": socket_path}
    return {"running": True, **{key: status.get(key) for key in STATUS_KEYS}}


def daemon_status(out: Output, status: dict | None, socket_path: str, *, action: str | None = None) -> None:
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
        ("cache", cache),
        ("idle exit", _duration(payload["idle_timeout_seconds"])),
        ("socket", payload["socket"]),
    ):
        out.line(f"  {name:<10}{value}")


def daemon_stopped(out: Output, stopped: dict | None) -> None:
    if out.json_mode:
        out.json({"stopped": stopped is not None, "pid": (stopped or {}).get("pid")})
        return
    if stopped is None:
        out.line("The thatch daemon was not running")
    else:
        out.line(f"Stopped the thatch daemon (pid {stopped.get('pid')})")


def exported(out: Output, outcome) -> None:
    payload = {"exported": outcome.exported, "stores": outcome.stores, "with_vectors": outcome.with_vectors,
               "output": outcome.output}
    if out.json_mode:
        out.json(payload)
        return
    what = f"{outcome.exported} memor{'y' if outcome.exported == 1 else 'ies'}"
    out.notice(f"exported {what} from {', '.join(outcome.stores) or 'no stores'}"
               + (" with vectors" if outcome.with_vectors else "") + (f" to {outcome.output}" if outcome.output else ""))


def imported(out: Output, outcome) -> None:
    if out.json_mode:
        out.json({
            "created": outcome.created,
            "replaced": outcome.replaced,
            "skipped": outcome.skipped,
            "embedded": outcome.embedded,
            "kept_vectors": outcome.kept_vectors,
            "without_vector": outcome.without_vector,
            "lines": outcome.lines,
            "model": outcome.model,
            "error_count": outcome.error_count,
            "errors": outcome.errors,
            "conflicts": outcome.conflicts,
            "notices": outcome.notices,
        })
        return
    for notice in outcome.notices:
        out.notice(notice)
    out.line(f"Imported {outcome.created} new, replaced {outcome.replaced}, skipped {outcome.skipped};"
             f" embedded {outcome.embedded}, kept {outcome.kept_vectors} vectors"
             + (f", {outcome.without_vector} without a vector" if outcome.without_vector else ""))
    if outcome.conflicts:
        out.notice(f"{outcome.skipped} already existed (pass --overwrite to replace them), e.g. line "
                   f"{outcome.conflicts[0]['line']}: {outcome.conflicts[0]['store']}/{outcome.conflicts[0]['slug']}")
    for error in outcome.errors[:20]:
        out.notice(f"line {error['line']}: {error['message']}")
    if outcome.error_count > 20:
        out.notice(f"... and {outcome.error_count - 20} more errors (use --json for all)")
