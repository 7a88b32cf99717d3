"""Reading and changing single memories and stores: list, show, forget,
setting and clearing their flags (memory/fields.py), rename, stores,
dropping an empty store.

These run on every light command, so nothing here may import numpy,
torch or sentence-transformers at module level (rename embeds through the
engine, imported when it runs)."""

from __future__ import annotations

from ..memory import values
from ..memory.filter import Filter
from ..support import validate
from ..support.errors import InvalidInput, ModelUnavailable
from ..support.textsafe import shell_word
from .scope import GLOBAL, branch_choice, existing, lookup, target

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..memory.records import Memory, StoreSummary
    from .context import Context


class Listing:
    """The memories of one store (`store`), or of every store (`store` None),
    newest first; `total` counts them all when `limit` left some out."""

    __slots__ = ("store", "memories", "branch", "total")

    def __init__(self, store: str | None, memories: list[Memory], branch: str | None = None,
                 total: int | None = None) -> None:
        self.store, self.memories, self.branch = store, memories, branch
        self.total = len(memories) if total is None else total

    def to_json(self) -> dict:
        return {"store": self.store, "memories": [m.brief() for m in self.memories], "total": self.total}


# --limit's ceiling for list: a listing is read from SQLite, not ranked, so far above recall's.
MAX_LISTED = 1_000_000


def list_memories(ctx: Context, store: str | None = None, *, branch: str | None = None,
                  this_branch: bool = False, all_branches: bool = False, archived: bool = False,
                  all_stores: bool = False, limit: int | None = None,
                  fields: Mapping[str, object] | None = None) -> Listing:
    """A store's memories (--store, else the detected store), or every
    store's with `all_stores`: every branch's and unscoped ones (the default,
    or `all_branches` said explicitly), or those scoped to one branch; only
    those holding what `fields` asks (filterable fields, memory/filter.py);
    those with a `first` flag (memory/fields.py) first, each part newest
    first; at most `limit` of them."""
    validate.one_of(**{"--store": store, "--all-stores": all_stores})
    validate.one_of(**{"--branch": branch is not None, "--this-branch": this_branch, "--all-branches": all_branches})
    if limit is not None:
        validate.limit(limit, MAX_LISTED)
    name = None if all_stores else target(ctx, store)
    branch = branch_choice(ctx, branch, this_branch)
    where = Filter([] if name is None else [name], all_stores=name is None, branch=branch, branch_only=True,
                   any_branch=branch is None, only_archived=archived, fields=values.filters(fields))
    db = ctx.db()
    found = db.select(where, newest_first=True, flagged_first=True, limit=limit)
    more = limit is not None and len(found) == limit
    return Listing(name, found, branch, db.count_where(where) if more else None)


def show(ctx: Context, label: str, store: str | None = None) -> Memory:
    """The memory, from --store, else the detected store, else global (its
    `store` says which), with its vector (whichever model made it), so
    `has_vector` says whether the row holds one."""
    found = lookup(ctx, label, store)
    return ctx.db().get(found.store, found.slug, with_vector=True) or found


def forget(ctx: Context, label: str, store: str | None = None) -> Memory:
    """Delete a memory of --store, else of the detected store only: a
    memory of global (shared by every repository) is forgotten only when
    asked for by --store global."""
    memory = lookup(ctx, label, store, fallback=False)
    return ctx.db().delete(memory.store, memory.slug, ctx.now())


class FlagChange:
    __slots__ = ("memory", "changed", "notices")

    def __init__(self, memory: Memory, changed: bool, notices: list[str] | None = None) -> None:
        self.memory, self.changed, self.notices = memory, changed, notices or []

    def to_json(self) -> dict:
        return {"memory": self.memory.brief(), "changed": self.changed, "notices": self.notices}


def set_flag(ctx: Context, label: str, name: str, value: bool, store: str | None = None) -> FlagChange:
    """Set or clear a flag (memory/fields.py) of one memory of --store or the
    detected store (each flag's meaning is in memory/fields.py). Doing it
    twice changes nothing."""
    from ..storage import maintenance

    memory = lookup(ctx, label, store, fallback=False)
    changed = maintenance.set_value(ctx.db(), memory.store, memory.slug, name, value, ctx.now())
    setattr(memory, name, value)
    notices = []
    if name == "pinned" and value and memory.unreviewed:
        # A pin is no review: otherwise one call would put a teammate's
        # unread text into every session.
        notices.append(f"{memory.label!r} is a teammate's memory nobody here has reviewed: agents see only its"
                       f" label until it is accepted (thatch sync --review --accept {shell_word(memory.label)})")
    return FlagChange(memory, changed, notices)


def set_items(ctx: Context, label: str, name: str, given: Sequence[str], *, add: bool,
              store: str | None = None) -> FlagChange:
    """Add `given` to a list field (memory/fields.py: tags) of one memory of
    --store or the detected store, or take them away, each checked as when
    saved; doing it twice changes nothing."""
    from ..memory.fields import BY_NAME
    from ..storage import maintenance

    field = BY_NAME[name]
    asked = set(values.listed(field, given))
    if not asked:
        raise InvalidInput(f"give at least one {field.item}")
    memory = lookup(ctx, label, store, fallback=False)
    held = set(getattr(memory, name))
    after = values.listed(field, held | asked) if add else tuple(sorted(held - asked))
    changed = maintenance.set_value(ctx.db(), memory.store, memory.slug, name, after, ctx.now())
    setattr(memory, name, after)
    return FlagChange(memory, changed)


class Rewritten:
    """A memory after `rename` or `edit`: `status` is renamed, updated or unchanged."""

    __slots__ = ("memory", "notice", "old_label", "old_slug", "status")

    def __init__(self, status: str, memory: Memory, old_label: str, old_slug: str, notice: str | None = None) -> None:
        self.status, self.memory, self.old_label, self.old_slug, self.notice = status, memory, old_label, old_slug, notice

    def to_json(self) -> dict:
        return {"status": self.status, "memory": self.memory.public(), "old_label": self.old_label,
                "old_slug": self.old_slug, "notices": [self.notice] if self.notice else []}


def rename(ctx: Context, old: str, new: str, store: str | None = None) -> Rewritten:
    """Give a memory of --store (or the detected store) a new label. Its slug
    follows the label, and so do its dedup verdicts."""
    label = validate.label(new)
    memory = lookup(ctx, old, store, fallback=False)
    if memory.label == label:
        raise InvalidInput(f"{memory.label!r} is already labelled that way")
    return _rewrite(ctx, "renamed", memory, label, memory.body, keep_verdicts=True)


def edit(ctx: Context, memory: Memory, text: str) -> Rewritten:
    """Save `text` as `memory`'s new content, in place. A first-line heading
    is its label (changing the heading renames it); without one the label
    stays and the whole text is the body."""
    from ..support.slugs import split_heading

    heading, body = split_heading(text)
    label = validate.label(heading) if heading is not None else memory.label
    if heading is None:
        body = text.strip("\n")
    if label == memory.label and body.strip("\n") == memory.body.strip("\n"):
        return Rewritten("unchanged", memory, memory.label, memory.slug)
    return _rewrite(ctx, "updated", memory, label, validate.content(body), keep_verdicts=False)


def _rewrite(ctx: Context, status: str, memory: Memory, label: str, body: str, *, keep_verdicts: bool) -> Rewritten:
    """The stored text changes (its heading is the label), so it is embedded
    again, or left without a vector, with a notice, when no model loads."""
    from ..storage import maintenance
    from ..support.slugs import passage_text, slugify

    db, slug = ctx.db(), slugify(label)
    if slug != memory.slug:
        maintenance.check_free(db, memory.store, slug)  # before the (slow) embedding
    text = passage_text(label, body)
    blob, model, notice = None, None, None
    try:
        embedded = ctx.engine().embed_passages([text])
        blob, model = embedded.blobs[0], embedded.model
    except ModelUnavailable as exc:
        notice = f"saved without a vector ({exc.message}); run 'thatch reindex' once the model loads"
    changed = maintenance.rewrite(db, memory, slug, label, text, blob, model, ctx.now(), keep_verdicts=keep_verdicts)
    changed.embedding = blob
    return Rewritten(status, changed, memory.label, memory.slug, notice)


def stores(ctx: Context) -> list[StoreSummary]:
    return ctx.db().store_summaries()


def drop_store(ctx: Context, name: str) -> str:
    """Remove an empty store from `stores`; refused while it holds memories."""
    from ..storage import maintenance

    name = existing(ctx, name)
    if name == GLOBAL:
        raise InvalidInput("the global store is always there; it cannot be dropped")
    maintenance.drop_store(ctx.db(), name)
    return name
