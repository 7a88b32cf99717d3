"""`thatch activity`: what the agent hooks and the MCP server gave which
agent session; `thatch pause` / `thatch resume`: stop and restart every
injection without uninstalling (ops/activity.py)."""

from __future__ import annotations

from ..ops.context import Context
from .declare import Json, Option, command
from .output import Output

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from typing import Annotated, Any

ACTIVITY_JSON = ("path, enabled, entries (oldest first, each: time (UTC), host (claude, codex, cursor, mcp or null),"
                 " session (null when the host sent none), event (reminder, nudge, extraction or mcp), store,"
                 " items (each: label, store, score: null when not scored))")
PAUSE_JSON = "paused (here), where (global or store), store, global, stores (every store paused)"
SESSION_HELP = "Only this agent session (its id as the host sends it)."
GLOBAL_HELP = "Everywhere, not only this repository's store."


@command("activity", examples=["thatch activity", "thatch activity --limit 5", "thatch activity --session abc123 --json"],
         json=ACTIVITY_JSON,
         notes="The record is private to you (0600) and bounded (at most about 512 kB, the oldest entries go"
               " first). The setting activity.enabled (THATCH_ACTIVITY) turns recording off.")
def activity(
    ctx: Context, out: Output, *,
    session: Annotated[str | None, Option("--session", metavar="S", help=SESSION_HELP)] = None,
    limit: Annotated[int, Option("--limit", "-n", metavar="N", min=1, help="Show the last N entries.")] = 20,
    as_json: Json = False,
) -> None:
    """Show which memories reached which agent session: the session-start reminder, prompt nudges, MCP results."""
    from ..ops import activity as record
    from ..support import paths

    found = record.entries(ctx.env, session, limit)
    if out.json_mode:
        out.json({"path": str(paths.state_dir(ctx.env) / record.FILE), "enabled": record.enabled(ctx.env),
                  "entries": found})
        return
    if not record.enabled(ctx.env):
        out.notice("recording is off (activity.enabled); these are the entries from before")
    if not found:
        out.line("Nothing recorded yet" + (f" for session {session}." if session else "."))
        return
    from ..support.textsafe import one_line
    from .render import Column, table

    rows = [(str(e.get("time", "")).replace("T", " ").rstrip("Z"), one_line(str(e.get("event") or "")),
             one_line(str(e.get("host") or "")), one_line(str(e.get("session") or "")), _memories(e))
            for e in found]
    if out.rich:
        table(out, [Column("time (UTC)", "dim", whole=True), Column("event", whole=True), Column("host", whole=True),
                    Column("session", "dim", give=2, least=8), Column("memories", "label", give=1, least=20)], rows)
        return
    out.lines(["\t".join(row) for row in rows])


def _memories(entry: dict[str, Any]) -> str:
    from ..support.textsafe import one_line

    shown = []
    for item in entry.get("items") or []:
        if not isinstance(item, dict):
            continue
        score = item.get("score")
        shown.append(one_line(str(item.get("label") or "")) + (f" ({score:.2f})" if isinstance(score, (int, float)) else ""))
    return ", ".join(shown) or "-"


def _pause(ctx: Context, out: Output, everywhere: bool, on: bool) -> None:
    from ..ops import activity as record
    from ..support.textsafe import one_line

    store = None if everywhere else ctx.place().store
    state = record.set_paused(ctx.env, store, on)
    here = record.paused(ctx.env, ctx.place().store)
    if out.json_mode:
        out.json({"paused": here is not None, "where": "global" if store is None else "store", "store": store,
                  "global": state["global"], "stores": state["stores"]})
        return
    where = "everywhere" if store is None else f"for {one_line(store)}"
    out.line(f"{'Paused' if on else 'Resumed'} thatch's context for agents {where}"
             + (": the hooks inject nothing; the MCP tools still answer when called." if on else "."))
    if not on and here:
        out.notice("still paused here: " + ("everywhere (thatch resume --global)" if here == "global"
                                             else "for this store (thatch resume)"))


@command("pause", examples=["thatch pause", "thatch pause --global"], json=PAUSE_JSON)
def pause(ctx: Context, out: Output, *,
          everywhere: Annotated[bool, Option("--global", help=GLOBAL_HELP)] = False, as_json: Json = False) -> None:
    """Stop the agent hooks from injecting anything (reminder, nudges, rules) here, without uninstalling."""
    _pause(ctx, out, everywhere, True)


@command("resume", examples=["thatch resume", "thatch resume --global"], json=PAUSE_JSON)
def resume(ctx: Context, out: Output, *,
           everywhere: Annotated[bool, Option("--global", help=GLOBAL_HELP)] = False, as_json: Json = False) -> None:
    """Let the agent hooks inject context again after thatch pause."""
    _pause(ctx, out, everywhere, False)
