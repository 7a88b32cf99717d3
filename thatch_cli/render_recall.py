"""How `recall` results look, within an optional character budget.

`--budget CHARS` caps what recall writes to stdout, for agents that paste it
into a context window. Results are kept best first while they fit and the
rest are left out whole: a JSON record is never cut, the document stays
valid, and `budget.omitted` says how many were dropped. The envelope
(query, stores, notices) always stays, so a budget smaller than it yields no
results rather than broken output.
"""

from __future__ import annotations

import json

from .output import Output
from .render import esc, memory_brief, snippet, table


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def record(result, mode: str) -> dict:
    ranked = result.ranked
    return {
        **memory_brief(result.memory),
        "score": round(result.score, 4),
        "match": result.match,
        "scores": {
            "fused": _round(ranked.score) if mode == "hybrid" else None,
            "dense": _round(ranked.dense),
            "dense_rank": ranked.dense_rank,
            "lexical": _round(ranked.lexical),
            "lexical_rank": ranked.lexical_rank,
        },
        "snippet": snippet(result.memory),
        "content": result.memory.public()["content"],
    }


def _document(outcome, results: list[dict], budget: int | None, omitted: int) -> dict:
    return {
        "query": outcome.query,
        "stores": outcome.stores,
        "branch": outcome.branch,
        "mode": outcome.mode,
        "results": results,
        "notices": outcome.notices,
        "budget": None if budget is None else {"chars": budget, "omitted": omitted},
    }


def _dumps(payload: dict) -> str:
    return Output.dumps(payload)


def fit_json(outcome, budget: int | None) -> dict:
    """The JSON document, holding as many results (best first) as fit in `budget` characters."""
    records = [record(r, outcome.mode) for r in outcome.results]
    if budget is None:
        return _document(outcome, records, None, 0)
    # Grow by each record's indented size (cheap), then confirm on the real
    # serialisation: the omitted count and separators shift it by a few characters.
    used = len(_dumps(_document(outcome, [], budget, len(records))))
    kept = 0
    for rec in records:
        text = json.dumps(rec, ensure_ascii=False, indent=2)
        size = len(text) + 4 * (text.count("\n") + 1) + 4
        if used + size > budget:
            break
        used += size
        kept += 1
    while True:
        document = _document(outcome, records[:kept], budget, len(records) - kept)
        if kept == 0 or len(_dumps(document)) <= budget:
            return document
        kept -= 1


def _plain_blocks(outcome) -> list[str]:
    blocks = []
    for r in outcome.results:
        branch = f" [{r.memory.branch}]" if r.memory.branch else ""
        blocks.append(f"{r.score:6.3f}  {r.memory.store}  {r.memory.label}{branch}\n        {snippet(r.memory)}\n")
    return blocks


def recall(out: Output, outcome, budget: int | None = None) -> None:
    if out.json_mode:
        out.json(fit_json(outcome, budget))
        return
    for notice in outcome.notices:
        out.notice(notice)
    if not outcome.results:
        out.line(f"No memories match in {', '.join(outcome.stores)}.")
        return
    blocks = _plain_blocks(outcome)
    kept = len(blocks)
    if budget is not None:
        used, kept = 0, 0
        for block in blocks:
            if used + len(block) > budget:
                break
            used, kept = used + len(block), kept + 1
        if kept < len(blocks):
            out.notice(f"{len(blocks) - kept} more result{'s' if len(blocks) - kept != 1 else ''}"
                       f" left out to stay within --budget {budget}")
    if out.rich:
        rows = [(f"{r.score:.2f}", esc(r.memory.store), f"[bold]{esc(r.memory.label)}[/]",
                 esc(r.memory.branch or ""), esc(snippet(r.memory, 80))) for r in outcome.results[:kept]]
        if rows:
            table(out, ("score", "store", "label", "branch", "snippet"), rows)
        return
    out.stdout.write("".join(blocks[:kept]))
