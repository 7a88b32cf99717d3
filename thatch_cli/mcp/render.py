"""Text for each tool's result, rendered from the same document the result
carries as structured content (views.py; so a capped document and its text
always agree). Short and plain: a model reads it. Every stored text (labels,
content, branches, store names) goes through agent_text, which escapes
control, bidi and zero-width characters, and a result holding memories
starts with the data note."""

from __future__ import annotations

from typing import Any

from ..memory.fields import FLAGS, LISTS
from ..support import agent_text
from ..support.agent_text import body, line

RECONCILE = ("Read them with memory_show and reconcile: merge into one memory (memory_remember with overwrite:"
             " true, then memory_forget the other), or record that they are distinct with dedup_mark_checked.")


def _where(memory: dict[str, Any]) -> str:
    return line(memory["store"]) + (f" @ {line(memory['branch'])}" if memory.get("branch") else "")


def _label(memory: dict[str, Any]) -> str:
    return repr(line(memory["label"]))


def _about(data: dict[str, Any]) -> list[str]:
    return [data["about"]] if data.get("about") else []


def _flags(memory: dict[str, Any]) -> list[str]:
    """The flags (memory/fields.py) set on a memory's JSON (a teammate's
    unreviewed memory says so in its authorship note), then its list
    fields' items ("tags: a, b")."""
    return ([f.json for f in FLAGS if f.json and memory.get(f.json) and f.name not in ("unreviewed", "incoming")]
            + [f"{f.json}: {', '.join(line(item) for item in memory[f.json])}" for f in LISTS
               if f.json and memory.get(f.json)])


def _facts(memory: dict[str, Any]) -> str:
    facts = [_where(memory)]
    if agent_text.teammate(memory):
        facts.append(agent_text.authorship(memory))
    if memory.get("confidence") is not None:
        facts.append(f"confidence {memory['confidence']}")
    return " · ".join(facts + _flags(memory))


def _code(memory: dict[str, Any]) -> list[str]:
    """The code it describes, and what became of it (views.code)."""
    lines = [f"describes: {', '.join(line(a) for a in memory['anchors'])}"] if memory.get("anchors") else []
    return lines + [f"doubt: {line(d)}; check the code before relying on it" for d in memory.get("drift") or []]


def _count(n: int) -> str:
    return f"{n} memory" if n == 1 else f"{n} memories"


def _notices(data: dict[str, Any]) -> list[str]:
    return [f"note: {notice}" for notice in data.get("notices") or []]


def render_remember(data: dict[str, Any]) -> str:
    memory = data["memory"]
    verb = "Replaced" if data["status"] == "replaced" else "Saved"
    lines = [f"{verb} {_label(memory)} in {_facts(memory)}.", *_code(memory), *_notices(data)]
    if data.get("similar"):
        lines.append("Similar memories already in this store (the save happened anyway):")
        lines += [f"  - {_label(m)} (similarity {m['score']:.2f})" for m in data["similar"]]
        lines += [RECONCILE, *_about(data)]
    return "\n".join(lines)


def render_recall(data: dict[str, Any]) -> str:
    lines = _notices(data)
    results = data["results"]
    where = ", ".join(line(store) for store in data["stores"])
    if not results:
        return "\n".join([*lines, f"No memories match in {where}."])
    lines += [f"thatch: {_count(len(results))} from {where} ({data['mode']} ranking).", *_about(data)]
    for number, result in enumerate(results, 1):
        shown = body(result["content"]) if "content" in result else f"({agent_text.WITHHELD})"
        lines += ["", f"[{number}] {_label(result)} — {_facts(result)} · score {result['score']:.3f}",
                  *_code(result), shown]
    return "\n".join(lines)


def render_list(data: dict[str, Any]) -> str:
    memories = data["memories"]
    total, offset = data.get("total", len(memories)), data.get("offset", 0)
    if not memories:
        return f"No memories in {line(data['store'])}." if not total else \
            f"No memories past {offset} of the {_count(total)} in {line(data['store'])}."
    if len(memories) == total:
        lines = [f"thatch: {_count(total)} in {line(data['store'])}.", *_about(data)]
    else:
        lines = [f"thatch: memories {offset + 1}-{offset + len(memories)} of {total} in {line(data['store'])}"
                 " (newest first).", *_about(data)]
    for m in memories:
        extra = [f"branch {line(m['branch'])}"] if m.get("branch") else []
        if m.get("confidence") is not None:
            extra.append(f"confidence {m['confidence']}")
        extra += _flags(m)
        if agent_text.teammate(m):
            extra.append(agent_text.authorship(m))
        extra.append(f"updated {m['updated_at'][:10]}")
        lines.append(f"- {_label(m)} ({', '.join(extra)})")
    following = data.get("next_offset")
    if following is not None:
        lines.append(f"{total - following} more: call memory_list with offset {following} for the next page.")
    return "\n".join(lines)


def render_show(data: dict[str, Any]) -> str:
    memory = data["memory"]
    return "\n".join([f"thatch: memory {_label(memory)} [{_facts(memory)} · updated {memory['updated_at']}]",
                      *_about(data), *_code(memory), "", body(memory["content"])])


def render_forget(data: dict[str, Any]) -> str:
    memory = data["forgotten"]
    return f"Forgot {_label(memory)} from {line(memory['store'])}."


def render_pin(data: dict[str, Any]) -> str:
    memory = data["memory"]
    state = "pinned" if memory.get("pinned") else "not pinned"
    return "\n".join([f"{_label(memory)} in {line(memory['store'])} is {state}"
                      f"{'' if data['changed'] else ' (unchanged)'}.", *_notices(data)])


def render_stores(data: dict[str, Any]) -> str:
    return "\n".join(f"- {line(s['name'])} ({_count(s['memories'])}, last update {s.get('last_update') or 'never'})"
                     for s in data["stores"]) or "No stores."


def _pair(p: dict[str, Any]) -> str:
    return f"  {p['score']:.3f}  {_label(p['a'])} <-> {_label(p['b'])}"


def render_duplicates(data: dict[str, Any]) -> str:
    store = line(data["store"])
    if not data["clusters"]:
        return (f"No near-duplicates in {store} at threshold {data['threshold']}"
                f" ({data['compared']} memories compared).")
    lines = [f"thatch: {data['pair_count']} near-duplicate pair(s) in {data['cluster_count']} cluster(s) in"
             f" {store} (threshold {data['threshold']}).", *_about(data)]
    for cluster in data["clusters"]:
        lines.append(f"Cluster of {cluster['size']}:")
        lines += [_pair(p) for p in cluster["pairs"]]
    lines.append(RECONCILE)
    return "\n".join(lines)


def render_verdict(data: dict[str, Any]) -> str:
    previous = f" (was {data['previous']})" if data.get("previous") else ""
    return (f"Recorded {_label(data['a'])} <-> {_label(data['b'])} as {data['status']} in"
            f" {line(data['store'])}{previous}.")


def render_hygiene(data: dict[str, Any]) -> str:
    store = line(data["store"])
    if data["clean"]:
        return f"{store} is healthy: no near-duplicates, stale memories or orphaned branches."
    lines = [f"thatch: {store} needs attention.", *_about(data)]
    if data.get("duplicates"):
        lines.append(f"Near-duplicate pairs ({data['duplicate_check']['pair_count']}):")
        lines += [_pair(p) for p in data["duplicates"]]
    if data.get("stale"):
        lines.append(f"Stale (no update or recall for {data['stale_days']}+ days):")
        lines += [f"  - {_label(s)} (idle {s['idle_days']} days)" for s in data["stale"]]
    for branch in data["orphans"]["branches"]:
        labels = ", ".join(_label(m) for m in branch["memories"])
        lines.append(f"Branch {line(branch['branch'])} no longer exists; its memories: {labels}")
    lines.append("Merge duplicates (memory_remember with overwrite, memory_forget), update or forget stale"
                 " memories, and fold a deleted branch's memories into one archived record.")
    return "\n".join(lines)


def render_payload(data: dict[str, Any]) -> str:
    items = data["interactions"]
    session = line(data["session_id"])
    if not items:
        return f"No queued tool interactions for session {session}."
    lines = [f"thatch: {len(items)} tool interaction(s) of session {session} to extract memories from"
             f" (project store {line(data['project_store'])}; user-wide knowledge goes to {data['global_store']}).",
             *_about(data)]
    for item in items:
        lines += ["", f"[{item['seq']}] {line(item['title'])}", f"input: {body(item['input'])}",
                  f"output: {body(item['output'])}"]
    if data["remaining"]:
        lines += ["", f"{data['remaining']} more are queued: call get_extraction_payload again for them."]
    if data.get("suggested_files"):
        lines += ["", "Files this session edited (pass those a memory is about as memory_remember's `files`):"
                      f" {', '.join(line(path) for path in data['suggested_files'])}"]
    lines += ["", "Save what a future session would need (decisions, conventions, fixes, preferences; not routine"
                  " steps) with memory_remember, one topic each, then call extraction_done."]
    return "\n".join(lines)


def render_done(data: dict[str, Any]) -> str:
    where = ", ".join(line(session) for session in data["sessions"]) or "no session"
    return f"Dropped {data['drained']} queued tool interaction(s) ({where})."


def render_error(data: dict[str, Any]) -> str:
    return f"error: {body(data['error']['message'])}"
