"""`thatch status`: which database, model, daemon, hooks and agent setups
are in use here (ops/status.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ops.context import Context
from .declare import Json, command
from .output import Output

if TYPE_CHECKING:
    from collections.abc import Sequence

STATUS_JSON = ("database (path, exists, bytes, schema, memories, stores, rules: predictions, behaviors), model (name, source, from, identity, kind,"
               " vectors: this_model, other_models, none), calibration (model, source, calibrated,"
               " reference, cutoffs: recall.floor, duplicates.threshold, nudge.threshold, each value, source, from,"
               " cosine), daemon (enabled, running, pid,"
               " model, version, ready, rss_bytes, uptime_seconds, requests), here (cwd, store, store_from, branch,"
               " repository, git_hooks: active, core_hooks_path, hooks; shell_hook; paused: global, store or null), agents (host, scope, state),"
               " backups (folder, count, bytes, kinds, newest, keep), settings (path, exists)")


@command("status", examples=["thatch status", "thatch status --json | jq .daemon"], json=STATUS_JSON)
def status(ctx: Context, out: Output, *, as_json: Json = False) -> None:
    """Show what thatch uses here: database and schema, model and its identity, cut-offs, daemon, hooks, agents, backups.

    Reads only: it creates no database, starts no daemon and loads no model."""
    import sys

    from ..integrations.shell import resolve_executable
    from ..ops.status import status as gather
    from ..support.errors import ThatchError

    try:
        executable: str | None = resolve_executable(sys.argv[0] if sys.argv else "", ctx.env)
    except ThatchError:
        executable = None  # not installed as a command: no hooks or agent setups can name it
    found = gather(ctx, executable).to_json()
    if out.json_mode:
        out.json(found)
        return
    _print(out, found)


def _size(count: int) -> str:
    # Powers of two, so the binary units: "MB" here once read 5 % small.
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def _duration(seconds: float | None) -> str:
    if not seconds:
        return "just started"
    if seconds < 60:  # a daemon the shell hook just warmed: "up 0 min" read as not up at all
        return f"up {int(seconds)} s"
    minutes = int(seconds // 60)
    return f"up {minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"up {minutes} min"


def _print(out: Output, found: dict) -> None:
    from .render import items, paint, plural

    Parts = list[tuple[str, str | None]]  # (text, style)

    def field(label: str, parts: Sequence[tuple[str, str | None]]) -> None:
        indent = 13
        lines = items(out, parts, room=out.width - indent) if out.rich else [" · ".join(p for p, _ in parts)]
        for number, line in enumerate(lines):
            head = paint(out, label, "header") + " " * (indent - 1 - len(label)) if number == 0 else " " * (indent - 1)
            out.stdout.write(f"{head} {line}\n")

    db = found["database"]
    if not db["exists"]:
        field("database", [(db["path"], None), ("not created yet (the first remember makes it)", "warn")])
    else:
        parts: Parts = [(db["path"], None), (f"schema {db['schema']}" if db["schema"] else "the original's format", None),
                 (_size(db["bytes"]), None)]
        if db["memories"] is not None:
            parts.append((f"{plural(db['memories'], 'memory', 'memories')} in {plural(db['stores'], 'store', 'stores')}",
                          None))
        if db.get("rules") and any(db["rules"].values()):
            parts.append((f"{plural(db['rules']['predictions'], 'learned preference', 'learned preferences')},"
                          f" {plural(db['rules']['behaviors'], 'behavior', 'behaviors')} (thatch rules)", None))
        field("database", parts)
    model = found["model"]
    field("model", [(model["identity"] or model["name"], "label"), (model["kind"], "dim"),
                    (f"from {model['from']}", "dim")])
    vectors = model.get("vectors")
    if vectors:
        parts = [(f"{vectors['this_model']} of this model", None)]
        if vectors["other_models"] or vectors["none"]:
            parts += [(f"{vectors['other_models']} of other models", "warn"), (f"{vectors['none']} without", "warn"),
                      ("thatch reindex embeds them", "dim")]
        field("vectors", parts)
    scale = found["calibration"]
    field("cut-offs", [(f"{key} {value['value']:g} ({value['source']})"
                        + (f" = cosine {value['cosine']:.2f}" if value["cosine"] is not None else ""), None)
                       for key, value in scale["cutoffs"].items()])
    if not scale["calibrated"]:
        field("calibration", [("not measured yet: the model is calibrated when it first loads", "dim")])
    daemon = found["daemon"]
    if daemon["running"]:
        field("daemon", [(f"running, pid {daemon['pid']}", "score"), (_size(daemon["rss_bytes"] or 0), None),
                         (_duration(daemon["uptime_seconds"]), None), (plural(daemon["requests"] or 0, "request",
                                                                               "requests"), None)])
    else:
        field("daemon", [("not running" if daemon["enabled"] else "disabled (daemon.enabled)", "dim"),
                         *([(daemon["error"], "warn")] if daemon.get("error") else [])])
    here = found["here"]
    parts = [(here["store"], "store"), (here["store_from"], "dim")]
    if here["branch"]:
        parts.append((f"branch {here['branch']}", "branch"))
    parts.append((here["repository"] or here["cwd"], None))
    field("here", parts)
    hooks = here["git_hooks"]
    if hooks is not None:
        field("git hooks", [(f"{name} {state}", "score" if state in ("installed", "chained") else "warn")
                            for name, state in hooks["hooks"].items()]
              + ([] if hooks["active"] else [(f"core.hooksPath is {hooks['core_hooks_path']}", "warn")]))
    field("shell hook", [(f"active ({here['shell_hook']})", "score") if here["shell_hook"]
                         else ("not in this shell (thatch init)", "dim")])
    by_host: dict[str, list[str]] = {}
    for entry in found["agents"]:
        if entry["state"] != "not wired":
            by_host.setdefault(entry["host"], []).append(f"{entry['scope']} {entry['state']}")
    field("agents", [(f"{host}: {', '.join(states)}", None) for host, states in by_host.items()]
          or [("none set up (thatch setup claude|cursor|codex)", "dim")])
    if here["paused"]:
        field("paused", [(("everywhere" if here["paused"] == "global" else "for this store")
                          + ": the hooks inject nothing (thatch resume" + (" --global)" if here["paused"] == "global" else ")"),
                          "warn")])
    backups = found["backups"]
    field("backups", [(plural(backups["count"], "backup", "backups"), None), (_size(backups["bytes"]), None),
                      (f"keeping {backups['keep']} of each kind", "dim")]
          + ([(f"newest {backups['newest']}", "dim")] if backups["newest"] else []))
    settings = found["settings"]
    field("settings", [(settings["path"], None), ("" if settings["exists"] else "(no file: defaults)", "dim")])
