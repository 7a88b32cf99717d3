"""The MCP tools: the original thatch's names and argument names, each a
thin call into ops/ (the same operations and input checks as the CLI),
returning the CLI's --json document and a text rendering of it.

Each tool declares its JSON schema here; the server refuses arguments that
break it before anything runs, with the message support/validate.py gives for the
same value on the command line (`checks`).
"""

from __future__ import annotations

from ..ops.context import Context
from ..support import validate
from . import render, views
from .results import Reply, cap
from .rules import RULE_TOOLS
from .tool import LABEL, NAME_CHECKS, STORE, Session, Tool, field_arguments, field_properties, string

RECALL_MAX_LIMIT = 20  # the original's cap on memory_recall's limit


# -- the original's tools ----------------------------------------------------------


def _remember(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.remember import remember

    outcome = remember(ctx, args["content"], args["label"], store=args.get("store"), branch=args.get("branch"),
                       confidence=args.get("confidence"), overwrite=bool(args.get("overwrite")),
                       archived=args.get("archived"), pin=bool(args.get("pin")),
                       private=bool(args.get("private")), files=args.get("files") or (),
                       given=field_arguments("given", args))
    data = outcome.to_json()
    drained = _drain_fetched(ctx, state)
    if drained:
        data["notices"].append(f"{drained} queued tool interaction(s) handed out by get_extraction_payload are"
                               " now done")
    return Reply(views.remembered(data), render.render_remember)


def _recall(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.recall import recall

    # Under another writer's lock, recall still answers (its stamps are skipped, with a notice).
    outcome = recall(ctx, args.get("query") or "", files=args.get("files"), store=args.get("store"),
                     branch=args.get("branch"),
                     limit=args.get("limit", 10), include_archived=bool(args.get("includeArchived")),
                     mode=args.get("mode", "hybrid"), all_branches=bool(args.get("all_branches")),
                     fields=field_arguments("where", args))
    data = views.recall(outcome.to_json())
    if args.get("budget"):
        # The count is filled in once capped (server.py); this placeholder is as long as it can get.
        data["budget"] = {"chars": args["budget"], "omitted": len(data["results"])}
    return Reply(data, render.render_recall, ("results",),
                 "ask for fewer results (`limit`), one `store`, or a more specific query")


LIST_PAGE = 100  # memory_list's default page


def _list(ctx: Context, args: dict, state: Session) -> Reply:
    """One page of the store's memories (newest first): `total` says how
    many there are and `next_offset` where the next page starts (null on
    the last), also when the character cap shortened this one."""
    from ..ops.memories import list_memories

    listing = list_memories(ctx, args.get("store"), branch=args.get("branch"), archived=bool(args.get("archived")),
                            all_branches=bool(args.get("all_branches")), fields=field_arguments("where", args))
    offset, limit = args.get("offset", 0), args.get("limit", LIST_PAGE)
    everything = listing.to_json()
    total = len(everything["memories"])
    page = everything["memories"][offset:offset + limit]
    data = {**views.listing({**everything, "memories": page}), "total": total, "offset": offset,
            "next_offset": offset + len(page)}
    # Capped here, not only by the server, so next_offset counts what was shown.
    reply = cap(Reply(data, render.render_list, ("memories",), "call memory_list again with `offset` set to next_offset"),
                state.max_chars - 100)
    shown = len(reply.data["memories"])
    if offset + shown < total:
        reply.data["next_offset"] = offset + shown
    else:
        reply.data.pop("next_offset", None)  # the last page (a model reads no nulls)
    return reply


def _show(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.anchors import memory_json
    from ..ops.memories import show

    memory = show(ctx, args["label"], args.get("store"))
    return Reply(views.show({"memory": memory_json(ctx, memory)}), render.render_show, (),
                 "read it whole with `thatch show LABEL` in a shell")


def _forget(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.memories import forget

    return Reply(views.forgotten({"forgotten": forget(ctx, args["label"], args.get("store")).brief()}),
                 render.render_forget)


def _pin(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.memories import set_flag

    change = set_flag(ctx, args["label"], "pinned", args.get("pinned", True), args.get("store"))
    data = change.to_json()
    if not data["notices"]:
        del data["notices"]
    return Reply({**data, "memory": views.memory(data["memory"], content=False)}, render.render_pin)


def _stores(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.memories import stores

    return Reply({"stores": [s.public() for s in stores(ctx)]}, render.render_stores, ("stores",), "")


def _duplicates(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.dedup import DEFAULT_PAIR_LIMIT, duplicates

    report = duplicates(ctx, args.get("store"), threshold=args.get("threshold"),
                        limit=args.get("limit", DEFAULT_PAIR_LIMIT))
    return Reply(views.report(report.to_json()), render.render_duplicates, ("clusters",),
                 "raise `threshold` or lower `limit`")


def _mark(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.dedup import mark

    verdict = mark(ctx, args["label_a"], args["label_b"], args["status"], store=args.get("store"))
    return Reply(views.lean(verdict.to_json()), render.render_verdict)


def _hygiene(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.hygiene import DEFAULT_STALE_DAYS, report
    from ..support.errors import EXIT_ATTENTION, EXIT_OK

    found = report(ctx, args.get("store"), stale_days=args.get("stale_days", DEFAULT_STALE_DAYS))
    data = found.to_json(EXIT_OK if found.clean else EXIT_ATTENTION)
    return Reply(views.report(data), render.render_hygiene, ("duplicates", "stale"),
                 "work through these first, then call it again")


# -- the extraction queue (ops/extraction.py) --------------------------------------------


def _drain_fetched(ctx: Context, state: Session) -> int:
    """Drop what this server handed out with get_extraction_payload (up to
    the last entry it gave each session): saving is what it was fetched for."""
    from ..ops.extraction import Queue

    drained = 0
    for session in list(state.fetched):
        through = state.fetched.pop(session, None)  # calls run in threads: another may have taken it
        if through is not None:
            drained += Queue(ctx.env, session).drain(through)
    return drained


def _payload(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.extraction import Queue

    session = args["session_id"]
    queue = Queue(ctx.env, session)
    given, left, _last = queue.take(state.max_chars)
    data = {"session_id": session, "project_store": ctx.default_store(), "global_store": "global",
            "interactions": [{k: e[k] for k in ("seq", "at", "tool", "title", "input", "output")} for e in given],
            "remaining": left, "dropped": queue.read().get("dropped", 0)}
    suggested = _edited_files(ctx, queue)
    if suggested:
        data["suggested_files"] = suggested
    reply = cap(Reply(views.payload(data), render.render_payload, ("interactions",),
                      "call get_extraction_payload again for the rest"), state.max_chars)
    # What the cap left out was never seen: it stays pending for the next call.
    shown = {e["seq"] for e in reply.data["interactions"]}
    if len(shown) < len(given):
        queue.release({e["seq"] for e in given} - shown)
        reply.data["remaining"] = left + len(given) - len(shown)
    if shown:
        state.fetched[session] = max(max(shown), state.fetched.get(session, 0))
    return reply


def _edited_files(ctx: Context, queue) -> list[str]:
    """The files the session edited, newest first, as memory_remember's
    `files` takes them (from the repository's top level): a memory saved from
    these interactions is likely about them."""
    from ..ops.anchors import relative

    edited = [f["path"] for f in reversed(queue.files()) if f.get("edited")]
    return [rel for rel in (relative(ctx, path) for path in edited[:5]) if rel and not rel.endswith("/")]


def _done(ctx: Context, args: dict, state: Session) -> Reply:
    from ..ops.extraction import Queue

    session = args.get("session_id")
    if session:
        drained = Queue(ctx.env, session).drain()
        state.fetched.pop(session, None)
        sessions = [session]
    else:
        sessions = sorted(state.fetched)
        drained = _drain_fetched(ctx, state)
    return Reply({"drained": drained, "sessions": sessions}, render.render_done)


SESSION = string("The session id the extraction note gave (the session whose tool calls were queued).", minLength=1,
                maxLength=500)

TOOLS: list[Tool] = [
    Tool(
        "memory_remember",
        "Save a memory: a labelled piece of knowledge for a future session with no context (a decision, a"
        " convention, a fix that took effort, a preference or correction from the user). One topic per memory;"
        " write it self-contained. Check memory_recall or memory_list first: to update a memory, pass"
        " overwrite: true with the same label. Similar existing memories are reported after the save (it always"
        " happens) so you can reconcile them.",
        {
            "label": string("Short descriptive title; the same label in the same store is the same memory.",
                           minLength=1, maxLength=validate.MAX_LABEL_CHARS),
            "content": string("The knowledge itself, understandable without this session.", minLength=1),
            "store": string("Store to write to: this project's by default; \"global\" for knowledge that holds"
                           " across projects (user preferences, environment)."),
            "branch": string("Git branch to scope the memory to (work in progress); omit for project-wide."),
            "confidence": {"type": "integer", "minimum": 1, "maximum": 10,
                           "description": "How established it is, 1-10: 1-2 a single signal, 5-6 moderate, 9"
                                          " stated by the user, 10 a hard constraint."},
            "overwrite": {"type": "boolean", "description": "Replace the memory with this label if it exists."},
            "archived": {"type": "boolean",
                         "description": "Keep as a long-term record, left out of recall and hygiene. Required"
                                        " when updating an archived memory: true keeps it archived, false"
                                        " restores it."},
            "pin": {"type": "boolean",
                    "description": "Pin it: every session of this project starts with it (a handoff, a rule"
                                   " to always follow). Saving again without pin keeps a pin."},
            "private": {"type": "boolean",
                        "description": "Keep it on this machine: never shared with the team by thatch sync."},
            "files": {"type": "array", "maxItems": 50,
                      "items": string("A file of this repository, optionally with lines: src/config.py or"
                                      " src/config.py:40-75.", minLength=1, maxLength=4096),
                      "description": "The code this memory describes (anchors): later sessions are told when it"
                                     " changes, and see the memory when they open the file. Replaces its anchors;"
                                     " omit to keep them."},
            **field_properties("given"),
        },
        _remember, required=("label", "content"), read_only=False,
        checks={**NAME_CHECKS, "content": validate.content, "confidence": validate.confidence},
    ),
    Tool(
        "memory_recall",
        "Search memories by meaning and by their words: this project's store and the global store together"
        " unless `store` is given; memories scoped to another git branch only with all_branches. Use it before"
        " answering anything the project or the user may have settled before. Returns the best matches with"
        " their full content. With `files`, only memories anchored to those files or directories (all of them"
        " when the query is empty).",
        {
            "query": string("What you are looking for, in natural language or exact identifiers (may be empty"
                            " with files)."),
            "files": {"type": "array", "maxItems": 50,
                      "items": string("A file or directory of this repository.", minLength=1, maxLength=4096),
                      "description": "Only memories anchored to these files or directories."},
            "store": string("Search only this store (default: this project's store and global)."),
            "branch": string("Include this branch's memories instead of the current branch's."),
            "all_branches": {"type": "boolean", "description": "Include the memories of every branch (each"
                                                               " result names its branch)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": RECALL_MAX_LIMIT,
                      "description": "Most results to return (default 10)."},
            "includeArchived": {"type": "boolean", "description": "Search archived memories too."},
            **field_properties("where"),
            "mode": {"type": "string", "enum": list(validate.MODES),
                     "description": "Ranking: hybrid (default: meaning and exact words), semantic or lexical."},
            "budget": {"type": "integer", "minimum": 1,
                       "description": "Most characters to return; whole results are dropped from the end."},
        },
        _recall, required=("query",), wait_for_model=False,
        checks={**NAME_CHECKS, "mode": validate.mode, "budget": validate.budget,
                "limit": lambda value: validate.limit(value, RECALL_MAX_LIMIT, "limit")},
    ),
    Tool(
        "memory_list",
        "List the memories of a store (labels and metadata, no content), newest first, a page at a time: see"
        " what exists before reading (memory_show) or writing (memory_remember). `total` is how many there are;"
        " when next_offset is not null, call again with that `offset` for the next page.",
        {
            "store": string("Store to list (default: this project's store)."),
            "branch": string("Only memories scoped to this branch."),
            "all_branches": {"type": "boolean", "description": "Every branch's memories and unscoped ones (the"
                                                               " default, said explicitly)."},
            "archived": {"type": "boolean", "description": "List archived memories instead of live ones."},
            **field_properties("where"),
            "offset": {"type": "integer", "minimum": 0,
                       "description": "Skip this many (newest first); pass the next_offset of the last page."},
            "limit": {"type": "integer", "minimum": 1, "maximum": validate.MAX_LIMIT,
                      "description": f"Most memories in this page (default {LIST_PAGE})."},
        },
        _list, checks=NAME_CHECKS,
    ),
    Tool(
        "memory_show",
        "Read one memory in full by its label (this project's store first, then global).",
        {"label": LABEL, "store": string("Store to read from (default: this project's store, then global).")},
        _show, required=("label",), checks=NAME_CHECKS,
    ),
    Tool(
        "memory_forget",
        "Delete one memory by label: when asked to forget something, or after merging duplicates.",
        {"label": LABEL, "store": STORE},
        _forget, required=("label",), read_only=False, checks=NAME_CHECKS,
    ),
    Tool(
        "memory_pin",
        "Pin a memory so every new session starts with it (the session-start reminder lists pinned memories"
        " first, and memory_list puts them first), or unpin it with pinned: false. For what must not be"
        " missed: a handoff to the next session, a rule to always follow.",
        {"label": LABEL, "store": STORE,
         "pinned": {"type": "boolean", "description": "true (the default) pins it, false unpins it."}},
        _pin, required=("label",), read_only=False, checks=NAME_CHECKS,
    ),
    Tool(
        "store_list",
        "List every store with its number of memories. \"global\" always exists; project stores are created by"
        " their first memory.",
        {}, _stores,
    ),
    Tool(
        "find_duplicates",
        "Find clusters of near-duplicate memories (similarity of their stored vectors, on a 0-1 scale that"
        " means the same for every embedding model) that may need merging. Pairs already judged with"
        " dedup_mark_checked are skipped.",
        {
            "store": STORE,
            "threshold": {"type": "number", "exclusiveMinimum": 0, "maximum": 1,
                          "description": "Similarity cut-off, above 0 and at most 1 (default 0.85)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": validate.MAX_PAIR_LIMIT,
                      "description": "Most pairs to report (default 200)."},
        },
        _duplicates,
        checks={**NAME_CHECKS, "threshold": validate.threshold,
                "limit": lambda value: validate.limit(value, validate.MAX_PAIR_LIMIT, "limit")},
    ),
    Tool(
        "dedup_mark_checked",
        "Record your verdict on a pair find_duplicates reported, so it is not reported again (until either"
        " memory changes).",
        {
            "label_a": string("Label of the first memory of the pair.", minLength=1),
            "label_b": string("Label of the second memory of the pair.", minLength=1),
            "status": {"type": "string", "enum": list(validate.VERDICTS),
                       "description": "duplicate, supplement, contradiction or unrelated."},
            "store": STORE,
        },
        _mark, required=("label_a", "label_b", "status"), read_only=False,
        checks={**NAME_CHECKS, "label_a": validate.label, "label_b": validate.label, "status": validate.status},
    ),
    Tool(
        "memory_hygiene",
        "Check a store's health: near-duplicate pairs, stale memories (neither updated nor recalled for"
        " `stale_days`) and memories of git branches that no longer exist. Reports only; changes nothing.",
        {
            "store": STORE,
            "stale_days": {"type": "integer", "minimum": 0, "maximum": validate.MAX_DAYS,
                           "description": "Days without an update or recall that make a memory stale (default 90)."},
        },
        _hygiene, checks={**NAME_CHECKS, "stale_days": validate.days},
    ),
    Tool(
        "get_extraction_payload",
        "Fetch the tool interactions queued for memory extraction in a session (what a thatch: note asked"
        " you to extract), oldest first, and mark them taken. Save what a future session needs with"
        " memory_remember, then call extraction_done.",
        {"session_id": SESSION},
        _payload, required=("session_id",), read_only=False,
    ),
    Tool(
        "extraction_done",
        "Finish extraction: drop a session's queued tool interactions (give session_id), or, without it, the"
        " ones this server handed out. Call it even when nothing was worth saving.",
        {"session_id": {**SESSION, "description": "The session whose queue to drop; omit for what"
                                                  " get_extraction_payload handed out here."}},
        _done, read_only=False,
    ),
]

TOOLS += RULE_TOOLS

BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}
