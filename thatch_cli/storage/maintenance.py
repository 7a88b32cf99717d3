"""Store upkeep in SQL: dedup verdicts, moving or archiving a branch's
memories, and the branch deletions the git hooks recorded."""

from __future__ import annotations

from ..memory import fields
from ..memory.filter import Filter
from ..memory.records import Memory
from ..support.errors import Conflict, NotFound
from . import fastread
from .fastread import LIVE
from .memories import MemoryDB


def verdicts(db: MemoryDB, store: str) -> list[tuple[str, str, str, str]]:
    """(slug_a, slug_b, status, checked_at) of every recorded verdict, slugs sorted."""
    return db.conn.execute(
        "SELECT slug_a, slug_b, status, checked_at FROM dedup_pairs WHERE store = ? ORDER BY slug_a, slug_b",
        (store,),
    ).fetchall()


def verdict_of(db: MemoryDB, store: str, slug_a: str, slug_b: str) -> str | None:
    """The verdict recorded on a pair (either order), if any."""
    a, b = sorted((slug_a, slug_b))
    row = db.conn.execute(
        "SELECT status FROM dedup_pairs WHERE store = ? AND slug_a = ? AND slug_b = ?", (store, a, b)
    ).fetchone()
    return row[0] if row else None


def record_verdict(db: MemoryDB, store: str, slug_a: str, slug_b: str, status: str, now: str) -> str | None:
    """Record a verdict on a pair under its sorted slugs (the original's
    dedup_mark_checked). Returns the verdict it replaced, if any."""
    a, b = sorted((slug_a, slug_b))
    with db.transaction() as conn:
        previous = verdict_of(db, store, a, b)
        conn.execute(
            "INSERT OR REPLACE INTO dedup_pairs (store, slug_a, slug_b, status, checked_at) VALUES (?, ?, ?, ?, ?)",
            (store, a, b, status, now),
        )
    return previous


def _scoped(db: MemoryDB, store: str, branch: str, *, live_only: bool) -> list[Memory]:
    where = Filter([store], branch=branch, branch_only=True, archived=not live_only)
    return sorted(db.select(where), key=lambda m: m.slug)


def move_branch(db: MemoryDB, store: str, old: str, new: str | None) -> list[Memory]:
    """Scope every memory (live and archived) of branch `old` to `new`
    (None: unscoped). Returns them as they are now; updated_at stays."""
    with db.transaction() as conn:
        moved = _scoped(db, store, old, live_only=False)
        conn.execute("UPDATE entries SET branch = ? WHERE store = ? AND branch = ?", (new, store, old))
    for memory in moved:
        memory.branch = new
    return moved


def archive_branch(db: MemoryDB, store: str, branch: str) -> list[Memory]:
    """Archive every live memory scoped to `branch`; returns them (now archived)."""
    with db.transaction() as conn:
        changed = _scoped(db, store, branch, live_only=True)
        conn.execute(
            f"UPDATE entries SET archived = 1 WHERE store = ? AND branch = ? AND {LIVE}", (store, branch)
        )
    for memory in changed:
        memory.archived = True
    return changed


def branch_deletions(db: MemoryDB, store: str) -> dict[str, str]:
    return fastread.branch_deletions(db.conn, store)


def index_problems(conn) -> dict[str, int]:
    """How far the keyword index is from entries: memories whose index row
    is missing or holds other text, and index rows no memory maps to
    (both 0 when it is exact). Takes a raw connection (tests, benchmarks)."""
    wrong = conn.execute(
        """SELECT count(*) FROM entries e
           LEFT JOIN thatch_cli_fts_rows m ON m.store = e.store AND m.slug = e.slug
           LEFT JOIN entries_fts f ON f.rowid = m.fts_rowid
           WHERE f.rowid IS NULL OR f.label IS NOT e.label OR f.content IS NOT e.content
              OR f.store IS NOT e.store OR f.slug IS NOT e.slug""").fetchone()[0]
    orphans = conn.execute(
        "SELECT count(*) FROM entries_fts WHERE rowid NOT IN (SELECT fts_rowid FROM thatch_cli_fts_rows)").fetchone()[0]
    return {"wrong": wrong, "orphans": orphans}


def set_value(db: MemoryDB, store: str, slug: str, name: str, value: object, now: str | None = None) -> bool:
    """Set a flag (memory/fields.py: archived, pinned ...) or a list field of
    one memory to `value`; False when it already was so. updated_at stays,
    as for a branch: the content did not change (the history still keeps
    the change, dated `now`: sync orders the change by it)."""
    field = fields.BY_NAME[name]
    if field.kind not in ("flag", "list") or field.table != "entries":
        raise ValueError(f"{name} is not a flag or a list of entries")
    stored = field.store(value)
    with db.transaction() as conn:
        cursor = conn.execute(f'UPDATE entries SET "{name}" = ? WHERE store = ? AND slug = ? AND "{name}" IS NOT ?',
                              (stored, store, slug, stored))
        if cursor.rowcount and now is not None:
            from . import history

            history.date_newest(conn, store, slug, "updated", now)
    return cursor.rowcount > 0


def rewrite(db: MemoryDB, memory: Memory, new_slug: str, new_label: str, content: str,
            embedding: bytes | None, model: str | None, now: str, *, keep_verdicts: bool) -> Memory:
    """Give `memory` a new label (and slug) and stored text in place: one
    UPDATE, so the full-text index, store version and any history trigger
    see an update; branch, confidence, archived and recall telemetry stay.
    With `keep_verdicts` (a rename) its dedup verdicts follow it to the new
    slug; without (new content) they are cleared, as an overwrite does.
    Conflict when another memory of the store already has the new slug."""
    store, old = memory.store, memory.slug
    with db.transaction() as conn:
        if new_slug != old:
            check_free(db, store, new_slug)
        if db.get(store, old) is None:
            raise NotFound(f"no memory {old!r} in store {store}", store=store, slug=old)
        conn.execute("UPDATE entries SET slug = ?, label = ?, content = ?, embedding = ?, model = ?, updated_at = ?"
                     " WHERE store = ? AND slug = ?", (new_slug, new_label, content, embedding, model, now, store, old))
        if not keep_verdicts:
            db.clear_verdicts(store, old)
        elif new_slug != old:
            pairs = conn.execute("SELECT slug_a, slug_b, status, checked_at FROM dedup_pairs"
                                 " WHERE store = ? AND (slug_a = ? OR slug_b = ?)", (store, old, old)).fetchall()
            db.clear_verdicts(store, old)
            for slug_a, slug_b, status, checked_at in pairs:
                a, b = sorted(new_slug if s == old else s for s in (slug_a, slug_b))
                conn.execute("INSERT OR REPLACE INTO dedup_pairs (store, slug_a, slug_b, status, checked_at)"
                             " VALUES (?, ?, ?, ?, ?)", (store, a, b, status, checked_at))
    renamed = db.get(store, new_slug)
    assert renamed is not None
    return renamed


def check_free(db: MemoryDB, store: str, slug: str) -> None:
    """Conflict when a memory of `store` already has `slug`."""
    taken = db.get(store, slug)
    if taken is not None:
        raise Conflict(f"a memory labelled {taken.label!r} already exists in {store} (slug {slug});"
                       " forget or rename it first", store=store, slug=slug, label=taken.label)


# Rows of these tables go with their store: what thatch keeps about it.
_DROPPED_WITH_STORE = ("dedup_pairs", "thatch_cli_deleted_branches")


def drop_store(db: MemoryDB, name: str) -> None:
    """Remove an empty store and what thatch kept about it (verdicts, branch
    deletions). Conflict while it holds memories, or rows of the original
    thatch's other features (behaviors, predictions ...: tables whose
    foreign key names the store), which thatch neither manages nor deletes.
    Its version counter stays: a warm daemon's cache must never mistake a
    re-created store for the old one."""
    with db.transaction() as conn:
        count = db.count([name])
        if count:
            raise Conflict(f"store {name} still holds {count} memor{'y' if count == 1 else 'ies'};"
                           " forget them (or move them with export/import) first", store=name, memories=count)
        held = _rows_naming_store(conn, name)
        if held:
            rows = sum(held.values())
            raise Conflict(f"store {name} still holds {rows} row{'' if rows == 1 else 's'} of the original thatch"
                           f" ({', '.join(sorted(held))}); thatch keeps them: drop the store with the original"
                           " thatch, or leave it", store=name, tables=held)
        for table in _DROPPED_WITH_STORE:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone():
                conn.execute(f"DELETE FROM {table} WHERE store = ?", (name,))
        conn.execute("DELETE FROM stores WHERE name = ?", (name,))


def _rows_naming_store(conn, name: str) -> dict[str, int]:
    """table -> rows whose foreign key to stores(name) is `name`, in every
    table but entries and those dropped with the store."""
    held: dict[str, int] = {}
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        if table in ("entries", "stores", *_DROPPED_WITH_STORE):
            continue
        quoted = '"' + table.replace('"', '""') + '"'
        for key in conn.execute(f"PRAGMA foreign_key_list({quoted})").fetchall():
            if key[2] == "stores":
                column = '"' + key[3].replace('"', '""') + '"'
                count = conn.execute(f"SELECT count(*) FROM {quoted} WHERE {column} = ?", (name,)).fetchone()[0]
                if count:
                    held[table] = held.get(table, 0) + count
    return held
