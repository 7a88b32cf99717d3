"""`thatch remember | list | show | forget | pin | unpin | stores | reindex`: one memory or
one store at a time (edit and rename are in cli/edit.py). Declaration, body and output of each command; the
operations themselves are ops/remember.py, ops/memories.py, ops/reindex.py.

Light commands (list, show, forget, stores) must import no numpy, torch
or sentence-transformers; the ops they call are imported inside the bodies
so each command pays only for what it uses."""

from __future__ import annotations

import sys

from ..support.errors import InvalidInput
from .declare import BRIEF, FULL, Argument, Option, command
from .render import label_text, table, tsv

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from typing import Annotated

    from ..memory.records import Memory, StoreSummary
    from ..ops.context import Context
    from .declare import Filtered, Given, Json, Label, Store, StoreArg
    from .output import Output

# Piped snippets are as wide as recall's (ops/recall.py SNIPPET_CHARS, not imported: list stays light).
PIPED_SNIPPET = 100


@command("remember", examples=[
    'thatch remember "Release process" "Tag, build the wheel, twine upload."',
    'thatch remember "Staging DB listens on port 5433"   # label: that line',
    'echo "Staging DB listens on port 5433" | thatch remember -',
    'git diff --stat | thatch remember "Refactor" - --this-branch',
    'thatch remember                      # on a terminal: opens $EDITOR',
    'thatch remember --global "Python style" "Black, line length 100."',
    'thatch remember --pin "Handoff" "Next: finish the migration, then drop the old table."',
    'thatch remember "parse_config ignores unknown keys" --file src/config.py:40-75',
], json=f"status (created, replaced or unchanged), memory ({FULL}), has_vector, similar (briefs with score),"
        " store_created, notices")
def remember(
    ctx: Context, out: Output, *,
    label: Annotated[str | None, Argument(metavar="LABEL", show_default=False,
                                          help="The memory's label; given alone, it is the content.")] = None,
    content: Annotated[str | None, Argument(metavar="CONTENT", show_default=False,
                                            help="The text ('-' reads standard input).")] = None,
    store: Store = None,
    create: Annotated[bool, Option("--create", help="Create --store's store without asking, even when its name is"
                                                    " close to an existing store's.")] = False,
    branch: Annotated[str | None, Option("--branch", "-b", metavar="BRANCH",
                                         help="Scope the memory to this branch.")] = None,
    this_branch: Annotated[bool, Option("--this-branch", help="Scope the memory to the current branch.")] = False,
    confidence: Annotated[int | None, Option("--confidence", "-c", metavar="1-10",
                                             help="How sure you are, 1-10.")] = None,
    overwrite: Annotated[bool, Option("--overwrite", help="Replace an existing memory with this label.")] = False,
    archived: Annotated[bool | None, Option("--archived/--no-archived", show_default=False,
                                            help="Archive (or restore) it; required when updating an archived memory.")] = None,
    pin: Annotated[bool, Option("--pin", help="Pin it: listed first, always in an agent's session-start reminder.")] = False,
    private: Annotated[bool, Option("--private", help="Keep it on this machine: thatch sync never shares it.")] = False,
    file: Annotated[list[str] | None, Option("--file", "-f", metavar="PATH[:START-END]", show_default=False,
                                             help="Anchor it to the code it describes: a file in a git checkout,"
                                                  " optionally a line range (repeatable).")] = None,
    given: Given = None,
    as_json: Json = False,
) -> None:
    """Save a memory. Saving the same label and text again changes nothing and says "unchanged".

    With one argument, that argument is the content, on a terminal as in a script: its first Markdown heading (or first line) becomes the label, cut at a word boundary to 80 characters. On a terminal, `thatch remember` with no content at all opens $VISUAL or $EDITOR (as git commit does): the first heading is the label, the rest the content.

    With --file, the memory is anchored to that code (see `thatch anchor`): a file outside any git checkout is an error (exit 2) and nothing is saved; --overwrite with --file replaces the anchors, without it keeps them.

    A label that exists already is an error (exit 4) unless --overwrite. A --store that does not exist yet is created, and the output says so; when its name is close to an existing store's (a typo?), thatch asks first on a terminal, and elsewhere refuses with a did-you-mean (exit 3) unless --create."""
    from ..ops.remember import remember as save
    from .editor import NEW_MEMORY_HINT, edited, on_terminal

    near = (lambda name, found: True) if create else (
        (lambda name, found: _confirm_new_store(ctx, name, found)) if on_terminal(ctx) else (lambda name, found: False))
    options = {"store": store, "branch": branch, "this_branch": this_branch, "confidence": confidence,
               "overwrite": overwrite, "archived": archived, "pin": pin, "private": private, "near_store": near,
               "files": file or (), "given": given}
    if label is None and content is None:
        if not on_terminal(ctx):
            raise InvalidInput("give the content ('-' reads standard input; on a terminal, your editor opens)")
        with edited(ctx, "", "memory", NEW_MEMORY_HINT) as text:
            from ..support.slugs import split_heading

            heading, body = split_heading(text)
            _saved(out, save(ctx, body if heading else text, heading, **options))
        return
    label, content = (None, label) if content is None else (label, content)
    assert content is not None  # both missing was handled above
    if content == "-":
        from ..support.validate import MAX_CONTENT_BYTES

        content = ctx.read_stdin(MAX_CONTENT_BYTES)
    _saved(out, save(ctx, content, label, **options))


def _confirm_new_store(ctx: Context, name: str, found: list[str]) -> bool:
    """Ask the person at the terminal whether `name`, close to `found`, is meant."""
    from ..support.suggest import did_you_mean
    from ..support.textsafe import visible

    stream = ctx.stderr or sys.stderr
    stream.write(f"thatch: there is no store {visible(repr(name), keep='')}{visible(did_you_mean(found), keep='')}\n"
                 f"Create {visible(repr(name), keep='')}? [y/N] ")
    stream.flush()
    answer = (ctx.stdin or sys.stdin).readline().strip().lower()
    return answer in ("y", "yes")


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
    for notice in (outcome.credential, outcome.notice):
        if notice:
            out.notice(notice)
    verb = "Replaced" if outcome.replaced else "Remembered"
    flags = ["private: never shared" if f == "private" else f for f in m.flags()]
    out.line(f"{verb} {m.label!r} in {where}" + (f" ({', '.join(flags)})" if flags else ""))
    if outcome.similar:
        from ..support.textsafe import shell_word

        # Commands to copy, with the store named: the notice may be read far from where it was saved.
        store = shell_word(m.store)
        count = len(outcome.similar)
        out.notice(f"{count} similar memor{'y' if count == 1 else 'ies'} already in {m.store}"
                   " (merge them with remember --overwrite, then forget; or keep both):")
        for similar, score in outcome.similar:
            out.notice(f"  {score:.2f}  {similar.label}: thatch show {shell_word(similar.label)} {store}")
            out.notice(f"        keep both: thatch dedup keep {shell_word(m.label)} {shell_word(similar.label)}"
                       f" --store {store}")


@command("list", examples=[
    "thatch list",
    "thatch list global",
    "thatch list --this-branch",
    "thatch list --all-stores --limit 20     # the 20 newest memories anywhere",
    "thatch list | cut -f1          # labels only (piped output is tab-separated)",
], json=f"store (null with --all-stores), memories ({BRIEF}), total")
def list_(
    ctx: Context, out: Output, *,
    store_arg: StoreArg = None,
    store: Store = None,
    all_stores: Annotated[bool, Option("--all-stores", "-a", help="Every store's memories, newest first.")] = False,
    branch: Annotated[str | None, Option("--branch", "-b", metavar="BRANCH",
                                         help="Only memories scoped to this branch.")] = None,
    this_branch: Annotated[bool, Option("--this-branch", help="Only memories scoped to the current branch.")] = False,
    all_branches: Annotated[bool, Option("--all-branches", help="Memories of every branch and unscoped ones (the"
                                                                " default, said explicitly).")] = False,
    archived: Annotated[bool, Option("--archived", help="List archived memories instead of live ones.")] = False,
    filtered: Filtered = None,
    limit: Annotated[int | None, Option("--limit", "-n", metavar="N", min=1,
                                        help="At most N memories, the newest (default: all).")] = None,
    as_json: Json = False,
) -> None:
    """List the memories of a store (default: the detected one), or of every store: pinned ones first, newest first.

    On a terminal, one row per memory that fits the window: label, branch, who wrote it (once a teammate's memory is among them), confidence, date and as much of the text as there is room for. Piped, the same columns tab-separated, one memory per line: label, branch, confidence, updated_at, snippet (with --all-stores, store first)."""
    from ..ops.memories import list_memories

    listing = list_memories(ctx, store, branch=branch, this_branch=this_branch, all_branches=all_branches,
                            archived=archived, all_stores=all_stores, limit=limit, fields=filtered)
    if out.json_mode:
        out.json(listing.to_json())
        return
    place = listing.store or "any store"
    if not listing.memories:
        out.notice(f"no {'archived ' if archived else ''}memories in {place}"
                   + (f" on branch {listing.branch}" if listing.branch else "")
                   + (" that match the filters" if filtered else ""))
        return
    if listing.total > len(listing.memories):
        out.notice(f"the {len(listing.memories)} newest of {listing.total} memories (--limit)")
    from ..support.textsafe import snippet

    every = listing.store is None
    if out.rich:
        from .render import Column

        # Whose a memory is, once a teammate's is among them (thatch sync): your own say nothing.
        shared = any(m.author for m in listing.memories)
        columns = [Column("store", "store", give=1, least=10)] if every else []
        columns += [Column("label", "label", give=1, least=16, marks=True), Column("branch", "branch", give=1, least=8)]
        columns += [Column("by", give=1, least=8)] if shared else []
        columns += [Column("conf", whole=True, right=True), Column("updated", "dim", whole=True),
                    Column("snippet", give=2, least=0.4)]
        rows = [([m.store] if every else []) + [label_text(m), m.branch or ""] + ([m.author or ""] if shared else [])
                + [str(m.confidence or ""), m.updated_at[:10], snippet(m.body, out.width)] for m in listing.memories]
        count = f"{listing.total} {'memory' if listing.total == 1 else 'memories'}"
        table(out, columns, rows, title=f"{place} · {count}")
        return
    tsv(out, [([m.store] if every else []) + [m.label, m.branch, m.confidence, m.updated_at, snippet(m.body, PIPED_SNIPPET)]
              for m in listing.memories])


@command("show", examples=[
    'thatch show "Release process"',
    "thatch show release-process global",
    "thatch show release-process --json | jq -r .memory.content",
], json=f"memory ({FULL}, anchors: path, start, end, commit, blob, fingerprint, anchored_at, drift: state,"
        " path, start, end, changed_lines, lines, since, note, summary), notices")
def show(
    ctx: Context, out: Output, *,
    label: Label,
    store_arg: StoreArg = None,
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Print one memory in full: from the detected store, else from global (it says so)."""
    from ..ops import anchors
    from ..ops.memories import show as find

    memory = find(ctx, label, store)
    anchored = anchors.of(ctx, [memory.key])
    notices = []
    if store is None and memory.store != ctx.default_store():
        notices.append(f"not in {ctx.default_store()}; showing {memory.label!r} from {memory.store}")
    if out.json_mode:
        out.json({"memory": anchors.memory_json(ctx, memory, anchored), "notices": notices})
        return
    for notice in notices:
        out.notice(notice)
    for doubt in anchored.notes(memory.key):
        out.notice(doubt)
    facts = _facts(memory) + _anchor_facts(anchored, memory)
    if out.rich:
        from ..support.textsafe import visible
        from .render import cut, items, paint

        body = "\n".join(line.rstrip() for line in visible(memory.body).strip("\n").splitlines())
        styled = [(facts[0], "store"), *((f, "branch" if f.startswith("branch ") else "dim") for f in facts[1:])]
        head = [paint(out, cut(visible(memory.label, keep=""), out.width), "label"), *items(out, styled)]
        out.stdout.write("\n".join(head) + "\n\n" + body + "\n")
        return
    out.line(memory.content)
    out.line()
    out.line("-- " + " · ".join(facts))


def _anchor_facts(anchored, memory: Memory) -> list[str]:
    """`anchored PATH:START-END @abc1234` per anchor (the code it describes)."""
    from ..support.textsafe import visible

    facts = []
    for path, start, end, commit, *_ in anchored.rows.get(memory.key, []):
        where = visible(path, keep="") + (f":{start}-{end}" if start is not None else "")
        facts.append(f"anchored {where}" + (f" @{commit[:7]}" if commit else ""))
    return facts


def _facts(memory: Memory) -> list[str]:
    facts = [memory.store, f"slug {memory.slug}"]
    if memory.branch:
        facts.append(f"branch {memory.branch}")
    if memory.confidence is not None:
        facts.append(f"confidence {memory.confidence}/10")
    facts += memory.flags()
    facts += memory.lists()
    if memory.incoming or memory.author:  # a teammate's (agent_text.teammate), said as agents read it
        from ..support.agent_text import authorship

        facts.append(authorship(memory))
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


@command("pin", examples=['thatch pin "Release process"', 'thatch pin "Python style" --global'],
         json=f"memory ({BRIEF}), changed, notices")
def pin(ctx: Context, out: Output, *, label: Label, store_arg: StoreArg = None, store: Store = None,
        as_json: Json = False) -> None:
    """Pin a memory: listed first, and always in a coding agent's session-start reminder (thatch reminder)."""
    _pinned(ctx, out, label, True, store)


@command("unpin", examples=['thatch unpin "Release process"'], json=f"memory ({BRIEF}), changed, notices")
def unpin(ctx: Context, out: Output, *, label: Label, store_arg: StoreArg = None, store: Store = None,
          as_json: Json = False) -> None:
    """Unpin a memory (unpinning one that is not pinned changes nothing)."""
    _pinned(ctx, out, label, False, store)


def _pinned(ctx: Context, out: Output, label: str, pinned: bool, store: str | None) -> None:
    verb = "Pinned" if pinned else "Unpinned"
    set_flag_and_say(ctx, out, label, "pinned", pinned, store, done=verb, state=verb.lower())


def set_flag_and_say(ctx: Context, out: Output, label: str, field: str, value: bool, store: str | None, *,
                     done: str, state: str) -> None:
    """Set one flag of a memory (ops.memories.set_flag) and say so: `done`
    when it changed ("Pinned"), `state` when it already was ("pinned")."""
    from ..ops.memories import set_flag

    change = set_flag(ctx, label, field, value, store)
    if out.json_mode:
        out.json(change.to_json())
        return
    m = change.memory
    for notice in change.notices:
        out.notice(notice)
    out.line(f"{done} {m.label!r} in {m.store}" if change.changed
             else f"Unchanged: {m.label!r} in {m.store} was already {state}")


@command("stores", examples=["thatch stores", "thatch stores --drop old/experiment"],
         json="stores (name, memories, last_update); with --drop: dropped")
def stores(
    ctx: Context, out: Output, *,
    drop: Annotated[str | None, Option("--drop", metavar="STORE", complete="stores",
                                          help="Remove this store, which must be empty, from the list.")] = None,
    as_json: Json = False,
) -> None:
    """List stores with their memory counts and last update (tab-separated when piped)."""
    from ..ops.memories import drop_store
    from ..ops.memories import stores as summaries

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
        from .render import Column

        table(out, [Column("store", "store", give=1, least=12), Column("memories", whole=True, right=True),
                    Column("last update", "dim", whole=True)],
              [(s.name, str(s.memories), s.last_update or "") for s in found])
        return
    tsv(out, [(s.name, s.memories, s.last_update or "-") for s in found])


@command("reindex", examples=["thatch reindex", "thatch reindex --store acme/widget"],
         json="model, checked, embedded, changed_meanwhile")
def reindex(
    ctx: Context, out: Output, *,
    store: Annotated[str | None, Option("--store", "-s", metavar="STORE",
                                        help="Only this store (default: every store).")] = None,
    as_json: Json = False,
) -> None:
    """Embed the memories of every store (or of --store) that have no vector, or one from a different model.

    Memories whose vectors the configured model already ranks are left as they are, so running it again is cheap."""
    from ..ops.reindex import BATCH
    from ..ops.reindex import reindex as embed_all
    from .progress import STEP, ProgressBar

    with ProgressBar.for_output(out, "Embedding", ctx, unit="memories") as progress:
        outcome = embed_all(ctx, store, progress=progress, batch=STEP if isinstance(progress, ProgressBar) else BATCH)
    if out.json_mode:
        out.json(outcome.to_json())
        return
    out.line(f"Re-embedded {outcome.embedded} of {outcome.checked} memories with {outcome.model}")
    if outcome.changed_meanwhile:
        out.notice(f"{outcome.changed_meanwhile} changed while re-embedding; run reindex again")
