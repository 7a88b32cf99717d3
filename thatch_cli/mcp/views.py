"""What a model reads from each tool: the structured content.

Claude Code and Codex put a tool result's `structuredContent` JSON in
front of the model, not its text (issue 17, point 7). So the document is
written for a model: what it needs first (labels, content, store, scores,
how established and how recent), none of the bookkeeping the CLI's
`--json` carries for scripts (slugs, recall counters, score breakdowns,
vector facts, the query echoed back), no nulls, and, wherever stored
memories appear, the data note first (agent_text.NOTE). The text content
is rendered from the same document (render.py), and both are capped to the
same character budget (results.py).
"""

from __future__ import annotations

from typing import Any

from ..memory.fields import FLAGS, LISTS
from ..support import agent_text

# The CLI's bookkeeping, left out wherever it appears.
INTERNAL = frozenset({"slug", "recall_count", "last_recalled_at", "model", "has_vector", "created_at", "match",
                      "scores", "snippet", "weak", "weak_count", "floor", "query", "store_created"})


def memory(m: dict[str, Any], *, content: bool = True, withhold: bool = True) -> dict[str, Any]:
    """One memory: label and where it lives first (and who wrote it, when a
    teammate did), then what qualifies it, then its text; a teammate's
    memory nobody here reviewed yet without its text, unless `withhold` is
    off (memory_show: reading it is then deliberate)."""
    view: dict[str, Any] = {"label": m["label"], "store": m["store"]}
    if m.get("branch"):
        view["branch"] = m["branch"]
    if m.get("author"):
        view["author"] = m["author"]
    if m.get("score") is not None:
        view["score"] = m["score"]
    if m.get("confidence") is not None:
        view["confidence"] = m["confidence"]
    for flag in FLAGS:  # only when set
        if flag.json and m.get(flag.json):
            view[flag.json] = True
    for listed in LISTS:  # only when it has items
        if listed.json and m.get(listed.json):
            view[listed.json] = list(m[listed.json])
    if m.get("updated_at"):
        view["updated_at"] = m["updated_at"]
    view.update(code(m.get("anchors") or []))
    if content and "content" in m:
        if withhold and agent_text.withheld(m):
            view["withheld"] = agent_text.WITHHELD
        else:
            view["content"] = m["content"]
    return view


def code(anchors: list[dict[str, Any]]) -> dict[str, Any]:
    """The code a memory describes (`anchors`: path or path:start-end) and,
    when it moved, changed or is gone since, one line each (`drift`), so the
    model treats the memory with doubt."""
    if not anchors:
        return {}
    view: dict[str, Any] = {"anchors": [a["path"] + (f":{a['start']}-{a['end']}" if a.get("start") else "")
                                        for a in anchors]}
    drift = [a["drift"]["summary"] for a in anchors if a.get("drift") and a["drift"]["state"] != "unchanged"]
    if drift:
        view["drift"] = drift
    return view


def lean(value: Any) -> Any:
    """`value` without INTERNAL keys and null members, all the way down."""
    if isinstance(value, dict):
        return {k: lean(v) for k, v in value.items() if k not in INTERNAL and v is not None}
    if isinstance(value, list):
        return [lean(v) for v in value]
    return value


def with_note(view: dict[str, Any], note: str = agent_text.NOTE) -> dict[str, Any]:
    return {"about": note, **view}


def recall(data: dict[str, Any]) -> dict[str, Any]:
    view: dict[str, Any] = {"stores": data["stores"], "mode": data["mode"],
                            "results": [memory(r) for r in data["results"]]}
    if data.get("branch"):
        view = {"stores": data["stores"], "branch": data["branch"], **view}
    if data.get("notices"):
        view["notices"] = data["notices"]
    return with_note(view) if view["results"] else view


def show(data: dict[str, Any]) -> dict[str, Any]:
    return with_note({"memory": memory(data["memory"], withhold=False)})


def listing(data: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for m in data["memories"]:
        row = memory(m, content=False)
        row.pop("store")
        rows.append(row)
    view = {"store": data["store"], "memories": rows}
    return with_note(view) if rows else view


def remembered(data: dict[str, Any]) -> dict[str, Any]:
    view: dict[str, Any] = {"status": data["status"], "memory": memory(data["memory"], content=False)}
    if data.get("similar"):
        view["similar"] = [memory(m, content=False) for m in data["similar"]]
    if data.get("notices"):
        view["notices"] = data["notices"]
    return with_note(view) if "similar" in view else view


def forgotten(data: dict[str, Any]) -> dict[str, Any]:
    return {"forgotten": {"label": data["forgotten"]["label"], "store": data["forgotten"]["store"]}}


def report(data: dict[str, Any]) -> dict[str, Any]:
    """duplicates, dedup verdicts, hygiene: their CLI document, lean, marked as data."""
    return with_note(lean(data))


def payload(data: dict[str, Any]) -> dict[str, Any]:
    return with_note(data, agent_text.PAYLOAD_NOTE)
