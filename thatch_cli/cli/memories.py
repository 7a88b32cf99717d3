"""`thatch remember | list | show | forget | stores | reindex`: one memory or
one store at a time (edit and rename are in cli/edit.py). Declaration, body and output of each command; the
operations themselves are ops/remember.py, ops/memories.py, ops/reindex.py.

Light commands (list, show, forget, stores) must import no numpy, torch
or sentence-transformers; the ops they call are imported inside the bodies
so each command pays only for what it uses."""

from __future__ import annotations

from typing import Annotated, Optional

from ..context import Context
from ..errors import InvalidInput
from ..records import Memory, StoreSummary
from .declare import BRIEF, FULL, Argument, Json, Label, Option, Store, StoreArg, command
from .output import Output
from .render import esc, table, tsv


@command("remember", examples=[
    'thatch remember "Release process" "Tag, build the wheel, twine upload."',
    'echo "Staging DB listens on port 5433" | thatch remember -   # label: that line',
    'git diff --stat | thatch remember "Refactor" - --this-branch',
    'thatch remember "Deploy checklist"   # on a terminal: opens $EDITOR',
    'thatch remember --global "Python style" "Black, line length 100."',
], json=f"status (created, replaced or unchanged), memory ({FULL}), has_vector, similar (briefs with score),"
        " store_created, notices")
def remember(
    ctx: Context, out: Output, *,
    label: Annotated[Optional[str], Argument(metavar="LABEL", show_default=False,
                                             help="The memory's label; with only one argument (piped or in a script), it is the content.")] = None,
    content: Annotated[Optional[str], Argument(metavar="CONTENT", show_default=False,
                                               help="The text ('-' reads standard input).")] = None,
    store: Store = None,
    branch: Annotated[Optional[str], Option("--branch", "-b", metavar="BRANCH",
                                            help="Scope the memory to this branch.")] = None,
    this_branch: Annotated[bool, Option("--this-branch", help="Scope the memory to the current branch.")] = False,
    confidence: Annotated[Optional[int], Option("--confidence", "-c", metavar="1-10",
                                                help="How sure you are, 1-10.")] = None,
    overwrite: Annotated[bool, Option("--overwrite", help="Replace an existing memory with this label.")] = False,
    archived: Annotated[Optional[bool], Option("--archived/--no-archived", show_default=False,
                                               help="Archive (or restore) it; required when updating an archived memory.")] = None,
    as_json: Json = False,
) -> None:
    """Save a memory. Saving the same label and text again changes nothing and says "unchanged".

    With one argument (piped or in a script; on a terminal it is the label, see below), that argument is the content, and its first Markdown heading (or first line) becomes the label, cut at a word boundary to 80 characters. On a terminal, `thatch remember` alone, or with just a one-line LABEL, opens $VISUAL or $EDITOR (as git commit does): the first heading is the label, the rest the content.

    A label that exists already is an error (exit 4) unless --overwrite; a store that does not exist yet is created, and the output says so."""
    from ..ops.remember import remember as save
    from .editor import edited, on_terminal

    if content is None and (label is None or ("\n" not in label and label != "-")) and on_terminal(ctx):
        initial = f"# {label}\n\n" if label is not None else ""
        with edited(ctx, initial, label or "memory") as text:
            from ..slugs import split_heading

            heading, body = split_heading(text)
            _saved(out, save(ctx, body if heading else text, heading, store=store, branch=branch,
                             this_branch=this_branch, confidence=confidence, overwrite=overwrite, archived=archived))
        return
    if label is None:
        raise InvalidInput("give the content ('-' reads standard input; on a terminal, your editor opens)")
    label, content = (None, label) if content is None else (label, content)
    if content == "-":
        content = ctx.read_stdin()
    _saved(out, save(ctx, content, label, store=store, branch=branch, this_branch=this_branch,
                     confidence=confidence, overwrite=overwrite, archived=archived))


def _saved(out: Output, outcome) -> None:
    if out.json_mode:
        out.json(outcome.to_json())
        return
    m = outcome.memory
    where = m.store + (f" @ {m.branch}" if m.branch else "")
    if outcome.unchanged:
        out.line(f"Unchanged: {m.label!r} is already in {where} with this content")
        return
    if outcome.store_created:
        out.notice(f"created store {m.store} (it did not exist; 'thatch stores' lists stores)")
    if outcome.notice:
        out.notice(outcome.notice)
    verb = "Replaced" if outcome.replaced else "Remembered"
    out.line(f"{verb} {m.label!r} in {where}" + (" (archived)" if m.archived else ""))
    if outcome.similar:
        count = len(outcome.similar)
        out.notice(f"{count} similar memor{'y' if count == 1 else 'ies'} already in {m.store};"
                   " merge them (remember --overwrite + forget) or keep both:")
        for similar, score in outcome.similar:
            out.notice(f"  {score:.2f}  {similar.label}")


@command("list", examples=[
    "thatch list",
    "thatch list global",
    "thatch list --this-branch",
    "thatch list | cut -f1          # labels only (piped output is tab-separated)",
], json=f"store, memories ({BRIEF})")
def list_(
    ctx: Context, out: Output, *,
    store_arg: StoreArg = None,
    store: Store = None,
    branch: Annotated[Optional[str], Option("--branch", "-b", metavar="BRANCH",
                                            help="Only memories scoped to this branch.")] = None,
    this_branch: Annotated[bool, Option("--this-branch", help="Only memories scoped to the current branch.")] = False,
    all_branches: Annotated[bool, Option("--all-branches", help="Memories of every branch and unscoped ones (the"
                                                                " default, said explicitly).")] = False,
    archived: Annotated[bool, Option("--archived", help="List archived memories instead of live ones.")] = False,
    as_json: Json = False,
) -> None:
    """List the memories of a store (default: the detected one), newest first.

    On a terminal, a table; piped, the same columns tab-separated, one memory per line: label, branch, confidence, updated_at, snippet."""
    from ..ops.memories import list_memories

    listing = list_memories(ctx, store, branch=branch, this_branch=this_branch, all_branches=all_branches,
                            archived=archived)
    if out.json_mode:
        out.json(listing.to_json())
        return
    if not listing.memories:
        out.notice(f"no {'archived ' if archived else ''}memories in {listing.store}"
                   + (f" on branch {listing.branch}" if listing.branch else ""))
        return
    from ..ops.recall import snippet

    if out.rich:
        rows = [(f"[bold]{esc(m.label)}[/]", esc(m.branch or ""), str(m.confidence or ""), m.updated_at[:10],
                 esc(snippet(m, 60))) for m in listing.memories]
        table(out, ("label", "branch", "conf", "updated", "snippet"), rows,
              title=f"{esc(listing.store)} · {len(listing.memories)}")
        return
    tsv(out, [(m.label, m.branch, m.confidence, m.updated_at, snippet(m, 60)) for m in listing.memories])


@command("show", examples=[
    'thatch show "Release process"',
    "thatch show release-process global",
    "thatch show release-process --json | jq -r .memory.content",
], json=f"memory ({FULL}), notices")
def show(
    ctx: Context, out: Output, *,
    label: Label,
    store_arg: StoreArg = None,
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Print one memory in full: from the detected store, else from global (it says so)."""
    from ..ops.memories import show as find

    memory = find(ctx, label, store)
    notices = []
    if store is None and memory.store != ctx.default_store():
        notices.append(f"not in {ctx.default_store()}; showing {memory.label!r} from {memory.store}")
    if out.json_mode:
        out.json({"memory": memory.public(), "notices": notices})
        return
    for notice in notices:
        out.notice(notice)
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


@command("forget", examples=[
    'thatch forget "Release process"',
    'thatch forget "Python style" global     # global only when named',
], json=f"forgotten ({BRIEF})")
def forget(
    ctx: Context, out: Output, *,
    label: Label,
    store_arg: StoreArg = None,
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Delete one memory and its duplicate verdicts, from the detected store unless told otherwise.

    Never from another store unasked: a memory that is only in global (shared by every repository) is forgotten with --store global (or --global)."""
    from ..ops.memories import forget as delete

    memory = delete(ctx, label, store)
    if out.json_mode:
        out.json({"forgotten": memory.brief()})
        return
    out.line(f"Forgot {memory.label!r} from {memory.store}")


@command("stores", examples=["thatch stores", "thatch stores --drop old/experiment"],
         json="stores (name, memories, last_update); with --drop: dropped")
def stores(
    ctx: Context, out: Output, *,
    drop: Annotated[Optional[str], Option("--drop", metavar="STORE",
                                          help="Remove this store, which must be empty, from the list.")] = None,
    as_json: Json = False,
) -> None:
    """List stores with their memory counts and last update (tab-separated when piped)."""
    from ..ops.memories import drop_store, stores as summaries

    if drop is not None:
        name = drop_store(ctx, drop)
        if out.json_mode:
            out.json({"dropped": name})
        else:
            out.line(f"Dropped the empty store {name}")
        return
    found: list[StoreSummary] = summaries(ctx)
    if out.json_mode:
        out.json({"stores": [s.public() for s in found]})
        return
    if out.rich:
        table(out, ("store", "memories", "last update"),
              [(f"[bold]{esc(s.name)}[/]", str(s.memories), s.last_update or "") for s in found])
        return
    tsv(out, [(s.name, s.memories, s.last_update or "-") for s in found])


@command("reindex", examples=["thatch reindex", "thatch reindex --store acme/widget"],
         json="model, checked, embedded, changed_meanwhile")
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
