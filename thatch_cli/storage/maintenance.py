"""Store upkeep in SQL: dedup verdicts, moving or archiving a branch's
memories, and the branch deletions the git hooks recorded."""

from __future__ import annotations

from ..records import Memory
from . import hooks
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
    return sorted(db.list([store], branch=branch, archived=False if live_only else None), key=lambda m: m.slug)


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
            "UPDATE entries SET archived = 1 WHERE store = ? AND branch = ? AND archived = 0", (store, branch)
        )
    for memory in changed:
        memory.archived = True
    return changed


def branch_deletions(db: MemoryDB, store: str) -> dict[str, str]:
    return hooks.branch_deletions(db.conn, store)


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
