"""`thatch remember | list | show | forget | stores | reindex`: one memory or
one store at a time. Declaration, body and output of each command; the
operations themselves are ops/remember.py, ops/memories.py, ops/reindex.py.

Light commands (list, show, forget, stores) must import no numpy, torch
or sentence-transformers; the ops they call are imported inside the bodies
so each command pays only for what it uses."""

from __future__ import annotations

from typing import Annotated, Optional

from ..context import Context
from ..errors import InvalidInput
from ..records import Memory, StoreSummary
from .declare import Argument, Json, Option, Store, command
from .output import Output
from .render import esc, table


@command("remember")
def remember(
    ctx: Context, out: Output, *,
    first: Annotated[str, Argument(metavar="[LABEL] CONTENT", show_default=False,
                                   help="Optional label, then the content ('-' reads stdin).")],
    second: Annotated[Optional[str], Argument(hidden=True)] = None,
    store: Store = None,
    branch: Annotated[Optional[str], Option("--branch", "-b", help="Scope the memory to this branch.")] = None,
    this_branch: Annotated[bool, Option("--this-branch", help="Scope the memory to the current branch.")] = False,
    confidence: Annotated[Optional[int], Option("--confidence", "-c", help="How sure you are, 1-10.")] = None,
    overwrite: Annotated[bool, Option("--overwrite", help="Replace an existing memory with this label.")] = False,
    archived: Annotated[Optional[bool], Option("--archived/--no-archived", show_default=False,
                                               help="Archive (or restore) it; required when updating an archived memory.")] = None,
    as_json: Json = False,
) -> None:
    """Save a memory. Without a label, the content's first heading or line becomes the label."""
    from ..ops.remember import remember as save

    label, content = (None, first) if second is None else (first, second)
    if content == "-":
        content = ctx.read_stdin()
    outcome = save(ctx, content, label, store=store, branch=branch, this_branch=this_branch,
                   confidence=confidence, overwrite=overwrite, archived=archived)
    if out.json_mode:
        out.json(outcome.to_json())
        return
    if outcome.notice:
        out.notice(outcome.notice)
    m = outcome.memory
    verb = "Replaced" if outcome.replaced else "Remembered"
    where = m.store + (f" @ {m.branch}" if m.branch else "")
    out.line(f"{verb} {m.label!r} in {where}" + (" (archived)" if m.archived else ""))
    if outcome.similar:
        count = len(outcome.similar)
        out.notice(f"{count} similar memor{'y' if count == 1 else 'ies'} already in {m.store};"
                   " merge them (remember --overwrite + forget) or keep both:")
        for similar, score in outcome.similar:
            out.notice(f"  {score:.2f}  {similar.label}")


@command("list")
def list_(
    ctx: Context, out: Output, *,
    store_arg: Annotated[Optional[str], Argument(metavar="[STORE]", help="Store to list (default: detected).")] = None,
    store: Store = None,
    branch: Annotated[Optional[str], Option("--branch", "-b", help="Only memories scoped to this branch.")] = None,
    archived: Annotated[bool, Option("--archived", help="List archived memories instead of live ones.")] = False,
    as_json: Json = False,
) -> None:
    """List the memories of a store."""
    from ..ops.memories import list_memories

    if store_arg and store and store_arg != store:
        raise InvalidInput("give the store either as an argument or with --store, not both")
    listing = list_memories(ctx, store_arg or store, branch=branch, archived=archived)
    if out.json_mode:
        out.json(listing.to_json())
        return
    if not listing.memories:
        out.line(f"No memories in {listing.store}.")
        return
    if out.rich:
        from ..ops.recall import snippet

        rows = [(f"[bold]{esc(m.label)}[/]", esc(m.branch or ""), str(m.confidence or ""), m.updated_at[:10],
                 esc(snippet(m, 60))) for m in listing.memories]
        table(out, ("label", "branch", "conf", "updated", "snippet"), rows,
              title=f"{esc(listing.store)} · {len(listing.memories)}")
        return
    out.lines([f"{m.label}\t[{m.branch}]" if m.branch else m.label for m in listing.memories])


@command("show")
def show(
    ctx: Context, out: Output, *,
    label: Annotated[str, Argument(help="Label (or slug) of the memory.")],
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Print one memory in full (detected store first, then global)."""
    from ..ops.memories import show as find

    memory = find(ctx, label, store)
    if out.json_mode:
        out.json({"memory": memory.public()})
        return
    facts = _facts(memory)
    if out.rich:
        from rich.markdown import Markdown

        from ..textsafe import visible

        out.console.print(f"[dim]{esc(' · '.join(facts))}[/]")
        out.console.print(Markdown(visible(memory.content)))
        return
    out.line(memory.content)
    out.line()
    out.line("-- " + " · ".join(facts))


def _facts(memory: Memory) -> list[str]:
    facts = [memory.store, f"slug {memory.slug}"]
    if memory.branch:
        facts.append(f"branch {memory.branch}")
    if memory.confidence is not None:
        facts.append(f"confidence {memory.confidence}/10")
    if memory.archived:
        facts.append("archived")
    facts.append(f"updated {memory.updated_at}")
    facts.append(f"recalled {memory.recall_count}×")
    return facts


@command("forget")
def forget(
    ctx: Context, out: Output, *,
    label: Annotated[str, Argument(help="Label (or slug) of the memory.")],
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Delete one memory and its duplicate verdicts."""
    from ..ops.memories import forget as delete

    memory = delete(ctx, label, store)
    if out.json_mode:
        out.json({"forgotten": memory.brief()})
        return
    out.line(f"Forgot {memory.label!r} from {memory.store}")


@command("stores")
def stores(ctx: Context, out: Output, *, as_json: Json = False) -> None:
    """List stores with their memory counts and last update."""
    from ..ops.memories import stores as summaries

    found: list[StoreSummary] = summaries(ctx)
    if out.json_mode:
        out.json({"stores": [s.public() for s in found]})
        return
    if out.rich:
        table(out, ("store", "memories", "last update"),
              [(f"[bold]{esc(s.name)}[/]", str(s.memories), s.last_update or "") for s in found])
        return
    out.lines([f"{s.name}\t{s.memories}\t{s.last_update or '-'}" for s in found])


@command("reindex")
def reindex(ctx: Context, out: Output, *, store: Store = None, as_json: Json = False) -> None:
    """Embed memories that have no vector, or one from a different model."""
    from ..ops.reindex import BATCH, reindex as embed_all
    from .progress import STEP, ProgressBar

    with ProgressBar.for_output(out, "Embedding", ctx) as progress:
        outcome = embed_all(ctx, store, progress=progress, batch=STEP if progress else BATCH)
    if out.json_mode:
        out.json(outcome.to_json())
        return
    out.line(f"Re-embedded {outcome.embedded} of {outcome.checked} memories with {outcome.model}")
    if outcome.changed_meanwhile:
        out.notice(f"{outcome.changed_meanwhile} changed while re-embedding; run reindex again")
