"""How each command's result looks: a stable JSON payload, and the same
facts for people (rich on a terminal, plain text otherwise)."""

from __future__ import annotations

from typing import Sequence

from .models import Memory, StoreSummary
from .output import Output
from .slugs import body_of

SNIPPET_CHARS = 100


def snippet(memory: Memory, width: int = SNIPPET_CHARS) -> str:
    text = " ".join(body_of(memory.label, memory.content).split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def memory_brief(memory: Memory) -> dict:
    return {
        "store": memory.store,
        "slug": memory.slug,
        "label": memory.label,
        "branch": memory.branch,
        "confidence": memory.confidence,
        "archived": memory.archived,
        "updated_at": memory.updated_at,
        "recall_count": memory.recall_count,
    }


def esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def table(out: Output, columns: Sequence[str], rows: Sequence[Sequence[str]], title: str | None = None) -> None:
    from rich.table import Table

    grid = Table(title=title, title_justify="left", header_style="bold", box=None, pad_edge=False)
    for column in columns:
        grid.add_column(column, overflow="fold")
    for row in rows:
        grid.add_row(*row)
    out.console.print(grid)


def remember(out: Output, outcome) -> None:
    m = outcome.memory
    similar = [{**memory_brief(s), "score": round(score, 4)} for s, score in outcome.similar]
    if out.json_mode:
        out.json({
            "status": "replaced" if outcome.replaced else "created",
            "memory": m.public(),
            "has_vector": outcome.has_vector,
            "similar": similar,
            "notices": [outcome.notice] if outcome.notice else [],
        })
        return
    if outcome.notice:
        out.notice(outcome.notice)
    verb = "Replaced" if outcome.replaced else "Remembered"
    where = m.store + (f" @ {m.branch}" if m.branch else "")
    out.line(f"{verb} {m.label!r} in {where}" + (" (archived)" if m.archived else ""))
    if similar:
        out.notice(f"{len(similar)} similar memor{'y' if len(similar) == 1 else 'ies'} already in {m.store};"
                   " merge them (remember --overwrite + forget) or keep both:")
        for s in similar:
            out.notice(f"  {s['score']:.2f}  {s['label']}")


def listing(out: Output, store: str, memories: list[Memory]) -> None:
    if out.json_mode:
        out.json({"store": store, "memories": [memory_brief(m) for m in memories]})
        return
    if not memories:
        out.line(f"No memories in {store}.")
        return
    if out.rich:
        rows = [(f"[bold]{esc(m.label)}[/]", esc(m.branch or ""), str(m.confidence or ""), m.updated_at[:10],
                 esc(snippet(m, 60))) for m in memories]
        table(out, ("label", "branch", "conf", "updated", "snippet"), rows, title=f"{store} · {len(memories)}")
        return
    for m in memories:
        branch = f"\t[{m.branch}]" if m.branch else ""
        out.line(f"{m.label}{branch}")


def show(out: Output, memory: Memory) -> None:
    if out.json_mode:
        out.json({"memory": memory.public()})
        return
    facts = [memory.store, f"slug {memory.slug}"]
    if memory.branch:
        facts.append(f"branch {memory.branch}")
    if memory.confidence is not None:
        facts.append(f"confidence {memory.confidence}/10")
    if memory.archived:
        facts.append("archived")
    facts.append(f"updated {memory.updated_at}")
    facts.append(f"recalled {memory.recall_count}×")
    if out.rich:
        from rich.markdown import Markdown

        out.console.print(f"[dim]{esc(' · '.join(facts))}[/]")
        out.console.print(Markdown(memory.content))
        return
    out.line(memory.content)
    out.line()
    out.line("-- " + " · ".join(facts))


def forgot(out: Output, memory: Memory) -> None:
    if out.json_mode:
        out.json({"forgotten": memory_brief(memory)})
        return
    out.line(f"Forgot {memory.label!r} from {memory.store}")


def stores(out: Output, summaries: list[StoreSummary]) -> None:
    if out.json_mode:
        out.json({"stores": [{"name": s.name, "memories": s.memories, "last_update": s.last_update}
                             for s in summaries]})
        return
    if out.rich:
        rows = [(f"[bold]{esc(s.name)}[/]", str(s.memories), s.last_update or "") for s in summaries]
        table(out, ("store", "memories", "last update"), rows)
        return
    for s in summaries:
        out.line(f"{s.name}\t{s.memories}\t{s.last_update or '-'}")


def reindexed(out: Output, outcome) -> None:
    if out.json_mode:
        out.json({"model": outcome.model, "checked": outcome.checked, "embedded": outcome.embedded,
                  "changed_meanwhile": outcome.changed_meanwhile})
        return
    out.line(f"Re-embedded {outcome.embedded} of {outcome.checked} memories with {outcome.model}")
    if outcome.changed_meanwhile:
        out.notice(f"{outcome.changed_meanwhile} changed while re-embedding; run reindex again")
