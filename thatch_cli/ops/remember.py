"""Saving a memory: validate, embed (or degrade), write, warn about near-duplicates.

One engine call (the daemon, or this process) embeds the text and finds the
near-duplicates already in the store; the write then happens here, so a
daemon that fails mid-way never costs the memory: the engine falls back to
embedding in-process, and an unloadable model saves without a vector.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from ..memory import values
from ..memory.fields import GIVEN
from ..memory.records import Memory
from ..support import validate
from ..support.errors import InvalidInput, ModelUnavailable, NotFound
from ..support.slugs import derive_label, passage_text, slugify
from .context import Context
from .scope import GLOBAL, branch_choice, target

MAX_DUPLICATE_WARNINGS = 3


@dataclass
class SaveOutcome:
    memory: Memory
    replaced: Memory | None
    similar: list[tuple[Memory, float]] = field(default_factory=list)
    notice: str | None = None
    credential: str | None = None  # it looks like it holds one (support/secrets.py)
    unchanged: bool = False  # the same memory was already saved: nothing written
    store_created: bool = False  # the save created its store
    anchors: list[dict] = field(default_factory=list)  # ops/anchors.py row_json, as saved

    @property
    def has_vector(self) -> bool:
        return self.memory.embedding is not None

    @property
    def status(self) -> str:
        return "unchanged" if self.unchanged else "replaced" if self.replaced else "created"

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "memory": {**self.memory.public(), "anchors": self.anchors},
            "has_vector": self.has_vector,
            "similar": [{**m.brief(), "score": round(score, 4)} for m, score in self.similar],
            "store_created": self.store_created,
            "notices": [n for n in (self.credential, self.notice) if n],
        }


def same_memory(existing: Memory, label: str, text: str, branch: str | None, confidence: int | None,
                archived: bool | None, pinned: bool | None = None, given: Mapping[str, object] | None = None) -> bool:
    """Whether saving would write what is already there: the same label and
    text, and every option given equal to the stored one (an option not
    given would be kept by an overwrite; archived not given means live),
    `given` fields (memory/fields.py) included."""
    return (existing.label == label and existing.content == text
            and (branch is None or branch == existing.branch)
            and (confidence is None or confidence == existing.confidence)
            and (pinned is None or pinned == existing.pinned)
            and all(getattr(existing, name) == value for name, value in (given or {}).items())
            and bool(archived) == existing.archived)


def resolve_label(label: str | None, content: str) -> tuple[str, str]:
    """(label, body): the given label, else one derived from the content's
    first heading or line (the heading then leaves the body)."""
    if label is None:
        label, body = derive_label(content)
        if not label:
            raise InvalidInput("cannot derive a label from the content; give one")
        return validate.label(label), body
    return validate.label(label), content


def _check_new_store(ctx: Context, name: str, near_store: Callable[[str, list[str]], bool]) -> None:
    db = ctx.db()
    if name == GLOBAL or db.store_exists(name):
        return
    from ..support.suggest import did_you_mean, typo_of

    found = typo_of(name, db.store_names())
    if found and not near_store(name, found):
        raise NotFound(f"no store named {name!r}{did_you_mean(found)} (nothing saved; --create makes a new store"
                       " of that name)", store=name, suggestions=found)


def remember(
    ctx: Context,
    content: str,
    label: str | None = None,
    *,
    store: str | None = None,
    branch: str | None = None,
    this_branch: bool = False,
    confidence: int | None = None,
    overwrite: bool = False,
    archived: bool | None = None,
    pin: bool = False,
    private: bool = False,
    near_store: Callable[[str, list[str]], bool] | None = None,
    files: Sequence[str] = (),
    given: Mapping[str, object] | None = None,
) -> SaveOutcome:
    """Save a memory; `pin` pins it (a memory saved again without it keeps its
    pin); `private` keeps it out of thatch sync (a private memory stays so).
    A --store that does not exist is created, except that when `near_store`
    is given and the name is close to an existing store's (a typo, most
    likely), it is asked (name, closest names) and the save is refused
    (NotFound, with a did-you-mean) unless it answers True. `files`
    (PATH[:START-END]) become its anchors (ops/anchors.py), replacing any it
    had; without them an overwrite keeps the ones it has. `given` sets the
    fields a save sets (memory/fields.py `given`); one not given keeps its
    stored value on an overwrite."""
    content = validate.content(content)
    chosen = values.chosen(given)
    confidence = validate.confidence(confidence)
    label, body = resolve_label(label, content)
    branch = branch_choice(ctx, branch, this_branch)
    store_name = target(ctx, store, create=True)
    if store is not None and near_store is not None:
        _check_new_store(ctx, store_name, near_store)
    text = passage_text(label, body)
    rows = _anchor_rows(ctx, files)
    now = ctx.now()
    memory = Memory(
        store=store_name,
        slug=slugify(label),
        label=label,
        content=text,
        branch=branch,
        confidence=confidence,
        pinned=True if pin else None,
        created_at=now,
        updated_at=now,
        **{f.name: chosen.get(f.name) for f in GIVEN},
    )
    db = ctx.db()
    existing = db.get(store_name, memory.slug, with_vector=True)
    if private and not (existing is not None and existing.private):
        # Marked before it is written, so no sync can share it first.
        from ..storage import sync as sync_table

        with db.transaction() as conn:
            sync_table.set_private(conn, store_name, memory.slug, True)
        if existing is not None:
            existing.private = True
    memory.private = private or bool(existing is not None and existing.private)
    if existing is not None and same_memory(existing, label, text, branch, confidence, archived, memory.pinned,
                                               chosen):
        # A retried save (an agent, a script run twice) succeeds without writing
        # the memory (its anchors, when given, are taken afresh).
        return SaveOutcome(memory=existing, replaced=None, unchanged=True, anchors=_anchored(ctx, existing, rows))
    store_created = not db.store_exists(store_name)
    # Fail before the (slow) embedding when the write cannot happen; save()
    # checks again inside its transaction.
    db.check_writable(store_name, memory.slug, overwrite=overwrite, archived=archived)
    notice = None
    similar: list = []
    try:
        answer = find_similar(ctx, memory, text)
        memory.embedding, memory.model = answer.vector, answer.model
        similar = answer.hits
    except ModelUnavailable as exc:
        notice = f"saved without a vector ({exc.message}); run 'thatch reindex' once the model loads"
    # Stamped at the write, not before the embedding (seconds while a model
    # loads): the history of an overwrite records its own write time.
    memory.created_at = memory.updated_at = ctx.now()
    engine = ctx.engine()
    hint = engine.wants_save_hints
    before = db.store_version(store_name) if hint else 0
    replaced = db.save(memory, overwrite=overwrite, archived=archived)
    if hint:
        # One save bumps the store version once per row it inserts or
        # deletes; any other difference means someone else wrote meanwhile,
        # and the daemon must reload instead of patching.
        after = db.store_version(store_name)
        if after - before == (2 if replaced is not None else 1):
            engine.saved(memory, before, after, replaced is not None)
    outcome = SaveOutcome(memory=memory, replaced=replaced, notice=notice, store_created=store_created,
                          anchors=_anchored(ctx, memory, rows), credential=credential_warning(ctx, label, text))
    if similar:
        found = db.get_many(h.key for h in similar)
        outcome.similar = [(found[h.key], h.score) for h in similar if h.key in found]
    return outcome


def _anchor_rows(ctx: Context, files: Sequence[str]) -> list[tuple] | None:
    """The anchors `files` name, checked before anything is written; None when none are given."""
    if not files:
        return None
    from .anchors import capture_all

    return capture_all(ctx, files)


def _anchored(ctx: Context, memory: Memory, rows: list[tuple] | None) -> list[dict]:
    """Write `rows` (when given) as the memory's anchors; its anchors' JSON."""
    from . import anchors

    if rows is not None:
        anchors.save(ctx, memory, rows, keep_others=False)
    return anchors.of(ctx, [memory.key], check=False).json(memory.key)


def credential_warning(ctx: Context, label: str, text: str) -> str | None:
    """The save's warning when the memory looks like it holds a credential
    (the check thatch sync runs before sharing one)."""
    from ..support import secrets

    return secrets.warning(label, text, ctx.setting("sync.secret_rules") or None)


def find_similar(ctx: Context, memory: Memory, text: str):
    """Embed `text` and find up to three live memories of the same store
    (any branch, never the one being replaced) it nearly repeats. Computed
    before the write, which changes nothing: the memory itself is excluded.
    A warning only: it never blocks the save.

    A passage search: the text is embedded as a passage (never with a BGE
    query prefix), the way the stored vectors it is compared with were."""
    from ..memory.filter import Filter

    return ctx.engine().search(Filter([memory.store], any_branch=True, exclude=[memory.key]), passage=text,
                               limit=MAX_DUPLICATE_WARNINGS, min_score=ctx.setting("duplicates.threshold"))
