"""`thatch status`: which database, model, daemon, hooks and agent setups a
command run here would use, in one place. Everything is read, nothing is
created or started: no database file appears, no daemon starts, no model
loads (a local model folder's identity may hash its weights once, as any
command using it would).

The `calibration` section holds the cut-offs that decide what counts as a
match for the model in use. Today they are the settings (recall.floor,
duplicates.threshold, nudge.threshold), the same for every model; a
per-model calibration would report its own values and source here (see
`calibration()`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..support import paths
from .context import Context

# The cut-offs a model's score scale decides, by setting.
CUTOFFS = ("recall.floor", "duplicates.threshold", "nudge.threshold")


class Status:
    __slots__ = ("sections",)

    def __init__(self, sections: dict[str, Any]) -> None:
        self.sections = sections

    def to_json(self) -> dict[str, Any]:
        return self.sections


def _setting(env, key: str) -> dict[str, Any]:
    from ..support.settings import origin, resolve

    value, source = resolve(env, key, strict=False)
    return {"value": value, "source": source, "from": origin(env, key)}


def database(ctx: Context) -> dict[str, Any]:
    from ..storage.fastread import summary

    path = ctx.db_file
    found = {"path": path, "exists": os.path.isfile(path), "bytes": 0, "schema": None, "memories": None,
             "stores": None, "rules": None}
    if not found["exists"]:
        if os.path.exists(path):  # a directory, a FIFO, a device: not "not created yet"
            from ..storage.opening import not_a_file

            problem = not_a_file(path, os.stat(path))
            if problem is not None:
                raise problem
        return found
    from ..storage.fastread import foreign_journal

    if foreign_journal(Path(path)) is not None:  # refused as every command refuses it, not shown as empty
        from ..storage.opening import check_journals

        check_journals(Path(path))
    found["bytes"] = sum(os.path.getsize(p) for p in (path, f"{path}-wal") if os.path.isfile(p))
    read = summary(Path(path))
    if read is not None:
        found.update({k: read[k] for k in ("schema", "memories", "stores")})
        found["_models"] = read["models"]
        found["rules"] = _rules(Path(path))
    return found


def _rules(path: Path) -> dict[str, int] | None:
    """How many learned rules the file holds (storage/rules.py), read-only; None when it cannot be read."""
    import sqlite3

    from ..storage.fastread import open_readonly
    from ..storage.rules import totals

    conn = open_readonly(path, timeout=1.0)
    if conn is None:
        return None
    try:
        return totals(conn)
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def model(ctx: Context, models: dict | None) -> dict[str, Any]:
    from ..model.embeddings import model_identity, model_space

    setting = _setting(ctx.env, "model")
    name = setting["value"]
    local = not name.startswith("fake:") and os.path.isdir(os.path.expanduser(name))
    identity = model_identity(name, ctx.env)
    found = {"name": name, "source": setting["source"], "from": setting["from"], "identity": identity,
             "kind": "fake" if name.startswith("fake:") else "local folder" if local else "hub id"}
    if models is not None:
        space = model_space(identity or name)
        ranked = sum(n for m, n in models.items() if m is not None and model_space(m) == space)
        without = models.get(None, 0)
        found["vectors"] = {"this_model": ranked, "other_models": sum(n for m, n in models.items() if m) - ranked,
                            "none": without}
    return found


def calibration(ctx: Context, identity: str | None) -> dict[str, Any]:
    """The cut-offs in force for the model: each setting's value on the
    common scale (and where it comes from) and, once the model has been
    calibrated, the raw cosine that value means for it."""
    from ..calibration import state

    measured = state(ctx.env)
    return {"model": identity, "source": "settings", "calibrated": measured["calibrated"],
            "reference": measured["reference"],
            "cutoffs": {key: {**_setting(ctx.env, key), "cosine": measured["cutoffs"][key]["cosine"]}
                        for key in CUTOFFS}}


def daemon(ctx: Context) -> dict[str, Any]:
    from ..daemon.client import Client, Unreachable

    found: dict[str, Any] = {"enabled": bool(_setting(ctx.env, "daemon.enabled")["value"]), "running": False}
    try:
        reply = Client(ctx.env, autostart=False).status()
    except Unreachable as exc:
        return {**found, "error": str(exc)}
    if reply:
        found.update({"running": True, **{k: reply.get(k) for k in (
            "pid", "model", "version", "ready", "rss_bytes", "uptime_seconds", "requests")}})
    return found


def here(ctx: Context, executable: str | None) -> dict[str, Any]:
    from .activity import paused

    place = ctx.place()
    repo = place.repo
    found: dict[str, Any] = {"cwd": ctx.cwd_text, "store": place.store,
                             "store_from": "THATCH_STORE" if place.overridden else "detected",
                             "branch": place.branch, "repository": None, "git_hooks": None,
                             "shell_hook": ctx.env.get("THATCH_SHELL_HOOK") or None,
                             "paused": paused(ctx.env, place.store)}
    if repo is not None:
        from ..location.scope import top_level

        found["repository"] = top_level(repo)
        found["git_hooks"] = _git_hooks(ctx, executable)
    return found


def _git_hooks(ctx: Context, executable: str | None) -> dict[str, Any] | None:
    from ..integrations import githooks
    from ..support.errors import ThatchError

    try:
        result = githooks.status(ctx.cwd, executable)
    except ThatchError:
        return None
    return {"active": result.location.hooks_path is None, "core_hooks_path": result.location.hooks_path,
            "hooks": {h.name: h.state for h in result.hooks}}


def agents(ctx: Context, executable: str | None) -> list[dict[str, Any]]:
    if executable is None:
        return []
    from ..integrations.hosts import setup as hosts

    return [{"host": h["host"], "scope": h["scope"], "state": h["state"]}
            for h in hosts.status(ctx.env, ctx.cwd, executable)]


def backups(ctx: Context) -> dict[str, Any]:
    from ..storage.backup import kept

    db = Path(ctx.db_file)
    found = kept(db.parent, db.name)
    sizes = [path.stat().st_size for _, _, path in found]
    kinds: dict[str, int] = {}
    for kind, _, _ in found:
        kinds[kind or "backup"] = kinds.get(kind or "backup", 0) + 1
    return {"folder": str(db.parent), "count": len(found), "bytes": sum(sizes), "kinds": kinds,
            "newest": str(found[0][2]) if found else None, "keep": _setting(ctx.env, "backup.keep")["value"]}


def status(ctx: Context, executable: str | None) -> Status:
    """Everything `thatch status` reports (see the module's doc)."""
    db = database(ctx)
    models = db.pop("_models", None)
    used = model(ctx, models)
    settings_file = str(paths.config_home(ctx.env) / "thatch" / "config.toml")
    return Status({
        "database": db,
        "model": used,
        "calibration": calibration(ctx, used["identity"]),
        "daemon": daemon(ctx),
        "here": here(ctx, executable),
        "agents": agents(ctx, executable),
        "backups": backups(ctx),
        "settings": {"path": settings_file, "exists": os.path.isfile(settings_file)},
    })
