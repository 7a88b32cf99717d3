"""Earlier versions of a memory: listing them, and bringing one back.

The versions are kept by triggers (storage/history.py) whoever changes a
memory; this module finds a memory's history, live or forgotten, and
restores a version as a new change (so a restore can itself be undone).
"""

from __future__ import annotations

from typing import Any

from ..memory import fields
from ..memory.records import Memory
from ..storage import history as table
from ..support import validate
from ..support.errors import NotFound
from ..support.slugs import slugify
from .context import Context
from .scope import default_scope


class Version:
    __slots__ = ("number", "event", "recorded_at", "memory", "changes")

    def __init__(self, number: int, event: str, recorded_at: str, memory: Memory) -> None:
        self.number, self.event, self.recorded_at, self.memory = number, event, recorded_at, memory
        self.changes: list[str] = []

    def to_json(self) -> dict[str, Any]:
        return {"version": self.number, "event": self.event, "recorded_at": self.recorded_at,
                "changes": self.changes, "memory": self.memory.public()}


def _memory(row: dict[str, Any]) -> Memory:
    return Memory.from_row(list(row), list(row.values()))


def changes(before: Memory, after: Memory | None) -> list[str]:
    """What happened between two states of a memory (None after: forgotten):
    the versioned fields (memory/fields.py) that differ, a flag by what it became
    ("archived", "unarchived"). The slug follows the label, so only the
    label is named."""
    if after is None:
        return ["forgotten"]
    found = []
    for f in fields.VERSIONED:
        if f.name != "slug" and getattr(before, f.name) != getattr(after, f.name):
            found.append(f.name if f.kind != "flag" else f.name if getattr(after, f.name) else "un" + f.name)
    return found or ["saved again"]


class History:
    __slots__ = ("store", "slug", "current", "versions")

    def __init__(self, store: str, slug: str, current: Memory | None, versions: list[Version]) -> None:
        self.store, self.slug, self.current, self.versions = store, slug, current, versions

    @property
    def label(self) -> str:
        return self.current.label if self.current else self.versions[-1].memory.label

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "slug": self.slug, "label": self.label,
                "current": self.current.public() if self.current else None,
                "forgotten": self.current is None,
                "versions": [v.to_json() for v in reversed(self.versions)]}


def _find(ctx: Context, label: str, store: str | None) -> tuple[str, str, Memory | None]:
    """(store, slug, live memory or None) of the memory `label` names, live
    or forgotten: --store, else the detected store, then global."""
    candidates = [validate.store(store)] if store is not None else default_scope(ctx.place())
    db = ctx.db()
    slugs = list(dict.fromkeys((slugify(label), label)))
    for name in candidates:
        for slug in slugs:
            memory = db.get(name, slug, with_vector=True)
            if memory is not None or table.has_history(db.conn, name, slug):
                return name, slug, memory
    raise NotFound(f"no memory labelled {label!r}, and no history of one, in {' or '.join(candidates)}",
                   label=label, stores=candidates)


def history(ctx: Context, label: str, store: str | None = None) -> History:
    name, slug, current = _find(ctx, label, store)
    versions = [Version(row["version"], row["event"], row["recorded_at"], _memory(row))
                for row in table.versions(ctx.db().conn, name, slug)]
    for version, after in zip(versions, [v.memory for v in versions[1:]] + [current]):
        # A forget followed by a restore or a new save still reads "forgotten".
        version.changes = ["forgotten"] if version.event == "deleted" else changes(version.memory, after)
    return History(name, slug, current, versions)


class Restored:
    __slots__ = ("status", "version", "memory", "previous")

    def __init__(self, status: str, version: int, memory: Memory, previous: Memory | None) -> None:
        self.status, self.version, self.memory, self.previous = status, version, memory, previous

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "version": self.version, "memory": self.memory.public(),
                "previous": self.previous.brief() if self.previous else None}


def restore_memory(ctx: Context, label: str, store: str | None = None, version: int | None = None) -> Restored:
    """Make a kept version the memory's current one (default: the newest
    kept, i.e. undo the last change or the forget). The version's label,
    content, branch, confidence, archived flag and vector come back; it
    keeps its creation time and recall counts; updated_at is now. What it
    replaces goes into the history, so the restore can be undone too."""
    version = validate.version(version)
    name, slug, _ = _find(ctx, label, store)
    db = ctx.db()
    with db.transaction():
        current = db.get(name, slug, with_vector=True)  # under the lock: a forget or edit since counts
        rows = table.versions(db.conn, name, slug, with_vectors=True)
        chosen = rows[-1] if version is None and rows else next((r for r in rows if r["version"] == version), None)
        if chosen is None:
            kept = ", ".join(str(r["version"]) for r in rows) or "none"
            raise NotFound(f"{label!r} in {name} has no version {version if version else 'kept'}"
                           f" (kept: {kept}; see 'thatch history')", store=name, slug=slug)
        target = _memory(chosen)
        if current is not None:
            if changes(target, current) == ["saved again"]:
                return Restored("unchanged", chosen["version"], current, current)
            for f in fields.FIELDS:  # what an overwrite always keeps stays the current memory's
                if f.overwrite == "keep":
                    setattr(target, f.name, getattr(current, f.name))
        target.updated_at = ctx.now()
        db.ensure_store(target.store)
        db.rewrite((name, slug) if current is not None else None, target.columns())
    return Restored("restored", chosen["version"], target, current)
