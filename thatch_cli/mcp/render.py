"""Text for each tool's result, rendered from the same --json document the
result carries as structured content (so a capped document and its text
always agree). Short and plain: a model reads it."""

from __future__ import annotations

from typing import Any

RECONCILE = ("Read them with memory_show and reconcile: merge into one memory (memory_remember with overwrite:"
             " true, then memory_forget the other), or record that they are distinct with dedup_mark_checked.")


def _where(memory: dict[str, Any]) -> str:
    return memory["store"] + (f" @ {memory['branch']}" if memory.get("branch") else "")


def _facts(memory: dict[str, Any]) -> str:
    facts = [_where(memory)]
    if memory.get("confidence") is not None:
        facts.append(f"confidence {memory['confidence']}")
    if memory.get("archived"):
        facts.append("archived")
    return " · ".join(facts)


def _count(n: int) -> str:
    return f"{n} memory" if n == 1 else f"{n} memories"


def _notices(data: dict[str, Any]) -> list[str]:
    return [f"note: {notice}" for notice in data.get("notices") or []]


def render_remember(data: dict[str, Any]) -> str:
    memory = data["memory"]
    verb = "Replaced" if data["status"] == "replaced" else "Saved"
    lines = [f"{verb} {memory['label']!r} in {_facts(memory)}.", *_notices(data)]
    if data["similar"]:
        lines.append("Similar memories already in this store (the save happened anyway):")
        lines += [f"  - {m['label']!r} (similarity {m['score']:.2f})" for m in data["similar"]]
        lines.append(RECONCILE)
    return "\n".join(lines)


def render_recall(data: dict[str, Any]) -> str:
    lines = _notices(data)
    results = data["results"]
    where = ", ".join(data["stores"])
    if not results:
        return "\n".join([*lines, f"No memories match in {where}."])
    lines.append(f"{_count(len(results))} from {where} ({data['mode']} ranking):")
    for number, result in enumerate(results, 1):
        lines += ["", f"[{number}] {result['label']} — {_facts(result)} · score {result['score']:.3f}",
                  result["content"]]
    return "\n".join(lines)


def render_list(data: dict[str, Any]) -> str:
    memories = data["memories"]
    total, offset = data.get("total", len(memories)), data.get("offset", 0)
    if not memories:
        return f"No memories in {data['store']}." if not total else \
            f"No memories past {offset} of the {_count(total)} in {data['store']}."
    if len(memories) == total:
        lines = [f"{_count(total)} in {data['store']}:"]
    else:
        lines = [f"Memories {offset + 1}-{offset + len(memories)} of {total} in {data['store']} (newest first):"]
    for m in memories:
        extra = [f"branch {m['branch']}"] if m.get("branch") else []
        if m.get("confidence") is not None:
            extra.append(f"confidence {m['confidence']}")
        if m.get("archived"):
            extra.append("archived")
        extra.append(f"updated {m['updated_at'][:10]}")
        lines.append(f"- {m['label']} ({', '.join(extra)})")
    following = data.get("next_offset")
    if following is not None:
        lines.append(f"{total - following} more: call memory_list with offset {following} for the next page.")
    return "\n".join(lines)


def render_show(data: dict[str, Any]) -> str:
    memory = data["memory"]
    count = memory["recall_count"]
    return (f"# {memory['label']}\n[{_facts(memory)} · updated {memory['updated_at']}"
            f" · recalled {count} time{'' if count == 1 else 's'}]\n\n{memory['content']}")


def render_forget(data: dict[str, Any]) -> str:
    memory = data["forgotten"]
    return f"Forgot {memory['label']!r} from {memory['store']}."


def render_stores(data: dict[str, Any]) -> str:
    return "\n".join(f"- {s['name']} ({_count(s['memories'])}, last update {s['last_update'] or 'never'})"
                     for s in data["stores"]) or "No stores."


def render_duplicates(data: dict[str, Any]) -> str:
    if not data["clusters"]:
        return (f"No near-duplicates in {data['store']} at threshold {data['threshold']}"
                f" ({data['compared']} memories compared).")
    lines = [f"{data['pair_count']} near-duplicate pair(s) in {data['cluster_count']} cluster(s) in"
             f" {data['store']} (threshold {data['threshold']}):"]
    for cluster in data["clusters"]:
        lines.append(f"Cluster of {cluster['size']}:")
        lines += [f"  {p['score']:.3f}  {p['a']['label']!r} <-> {p['b']['label']!r}" for p in cluster["pairs"]]
    lines.append(RECONCILE)
    return "\n".join(lines)


def render_verdict(data: dict[str, Any]) -> str:
    previous = f" (was {data['previous']})" if data["previous"] else ""
    return f"Recorded {data['a']['label']!r} <-> {data['b']['label']!r} as {data['status']} in {data['store']}{previous}."


def render_hygiene(data: dict[str, Any]) -> str:
    if data["clean"]:
        return f"{data['store']} is healthy: no near-duplicates, stale memories or orphaned branches."
    lines = [f"{data['store']} needs attention:"]
    if data["duplicates"]:
        lines.append(f"Near-duplicate pairs ({data['duplicate_check']['pair_count']}):")
        lines += [f"  {p['score']:.3f}  {p['a']['label']!r} <-> {p['b']['label']!r}" for p in data["duplicates"]]
    if data["stale"]:
        lines.append(f"Stale (no update or recall for {data['stale_days']}+ days):")
        lines += [f"  - {s['label']} (idle {s['idle_days']} days)" for s in data["stale"]]
    for branch in data["orphans"]["branches"]:
        labels = ", ".join(m["label"] for m in branch["memories"])
        lines.append(f"Branch {branch['branch']} no longer exists; its memories: {labels}")
    lines.append("Merge duplicates (memory_remember with overwrite, memory_forget), update or forget stale"
                 " memories, and fold a deleted branch's memories into one archived record.")
    return "\n".join(lines)


def render_payload(data: dict[str, Any]) -> str:
    items = data["interactions"]
    if not items:
        return f"No queued tool interactions for session {data['session_id']}."
    lines = [f"{len(items)} tool interaction(s) of session {data['session_id']} to extract memories from"
             f" (project store {data['project_store']}; user-wide knowledge goes to {data['global_store']}):"]
    for item in items:
        lines += ["", f"[{item['seq']}] {item['title']}", f"input: {item['input']}", f"output: {item['output']}"]
    if data["remaining"]:
        lines += ["", f"{data['remaining']} more are queued: call get_extraction_payload again for them."]
    lines += ["", "Save what a future session would need (decisions, conventions, fixes, preferences; not routine"
                  " steps) with memory_remember, one topic each, then call extraction_done."]
    return "\n".join(lines)


def render_done(data: dict[str, Any]) -> str:
    where = ", ".join(data["sessions"]) or "no session"
    return f"Dropped {data['drained']} queued tool interaction(s) ({where})."


def render_error(data: dict[str, Any]) -> str:
    return f"error: {data['error']['message']}"
