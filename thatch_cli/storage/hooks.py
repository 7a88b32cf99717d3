"""What the machine-facing hot paths (shell prompt, git hooks, completion,
agent hooks) read and write. Standard library only, on raw connections, no
thatch records: these paths have a 50 ms budget and must never create,
upgrade or wait long on a database.
"""

from __future__ import annotations

import sqlite3
TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~2 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Sequence

# Git runs reference-transaction more than once per deletion; a second
# record of the same branch this soon after the first is the same deletion.
DUPLICATE_WINDOW_S = 120


def _marks(values: Sequence) -> str:
    return ",".join("?" * len(values))


def open_readonly(path: Path, timeout: float = 0.5) -> sqlite3.Connection | None:
    """The database opened read-only, or None when there is none or it cannot
    be opened: a hook never creates or upgrades it, and waits on a writer
    for at most `timeout` seconds."""
    try:
        if not path.is_file():
            return None
        return sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=timeout)
    except (OSError, ValueError, sqlite3.Error):
        return None


def open_writable(path: Path, timeout: float = 1.0) -> sqlite3.Connection | None:
    """The existing database opened for a short write (autocommit mode), or
    None when there is none. Never creates or upgrades it."""
    try:
        if not path.is_file():
            return None
        conn = sqlite3.connect(path, isolation_level=None, timeout=timeout)
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        return conn
    except (OSError, sqlite3.Error):
        return None


def branch_counts(conn: sqlite3.Connection, store: str) -> dict[str | None, int]:
    """Live memories per branch (None = unscoped) of one store."""
    rows = conn.execute(
        "SELECT NULLIF(branch, ''), count(*) FROM entries WHERE store = ? AND archived = 0 GROUP BY 1",
        (store,),
    )
    return {branch: count for branch, count in rows}


def branch_labels(conn: sqlite3.Connection, store: str, branch: str) -> list[str]:
    """Labels of the live memories scoped to `branch`, newest first."""
    rows = conn.execute(
        "SELECT label FROM entries WHERE store = ? AND branch = ? AND archived = 0 ORDER BY updated_at DESC, slug",
        (store, branch),
    )
    return [r[0] for r in rows]


def labels(conn: sqlite3.Connection, stores: Sequence[str]) -> list[str]:
    rows = conn.execute(f"SELECT label FROM entries WHERE store IN ({_marks(stores)}) ORDER BY label", list(stores))
    return list(dict.fromkeys(r[0] for r in rows))


def store_names(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM stores ORDER BY name")]


def branches(conn: sqlite3.Connection, stores: Sequence[str]) -> list[str]:
    rows = conn.execute(
        f"SELECT DISTINCT branch FROM entries WHERE store IN ({_marks(stores)})"
        " AND branch IS NOT NULL AND branch != '' ORDER BY branch", list(stores))
    return [r[0] for r in rows]


def top_memories(conn: sqlite3.Connection, store: str, limit: int) -> list[tuple[str, int, int | None]]:
    """(label, recall count, confidence) of the store's unscoped live
    memories an agent uses most: most recalled, then most confident, then newest."""
    rows = conn.execute(
        "SELECT label, recall_count, confidence FROM entries WHERE store = ? AND archived = 0"
        " AND (branch IS NULL OR branch = '') AND (recall_count > 0 OR confidence IS NOT NULL)"
        " ORDER BY recall_count DESC, COALESCE(confidence, 0) DESC, updated_at DESC, slug LIMIT ?",
        (store, limit))
    return [(label, count or 0, confidence) for label, count, confidence in rows]


def branch_counts_and_stale(conn: sqlite3.Connection, store: str, cutoff: str) -> tuple[dict[str | None, int], int]:
    """branch_counts, and how many of those live memories were neither
    updated nor recalled since `cutoff` (an ISO timestamp; thatch's
    timestamps sort as text), in one pass over the store."""
    rows = conn.execute(
        "SELECT NULLIF(branch, ''), count(*), sum(max(updated_at, COALESCE(last_recalled_at, '')) < ?)"
        " FROM entries WHERE store = ? AND archived = 0 GROUP BY 1", (cutoff, store)).fetchall()
    return {branch: count for branch, count, _stale in rows}, sum(stale or 0 for _branch, _count, stale in rows)


def store_version(conn: sqlite3.Connection, store: str) -> int | None:
    """The store's change counter (schema 1+); None when the table is absent."""
    try:
        row = conn.execute("SELECT version FROM thatch_cli_store_versions WHERE store = ?", (store,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return int(row[0]) if row else 0


def live_count(conn: sqlite3.Connection, store: str, branch: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM entries WHERE store = ? AND branch = ? AND archived = 0", (store, branch)
    ).fetchone()
    return int(row[0])


def branch_deletions(conn: sqlite3.Connection, store: str) -> dict[str, str]:
    """branch -> when it was last seen deleted, from the git hooks' record;
    empty when that table is absent (a database thatch never upgraded)."""
    try:
        rows = conn.execute(
            "SELECT branch, max(deleted_at) FROM thatch_cli_deleted_branches WHERE store = ? GROUP BY branch",
            (store,),
        ).fetchall()
    except sqlite3.OperationalError:
        return {}
    return {branch: at for branch, at in rows if branch and at}


def record_deletion(conn: sqlite3.Connection, store: str, branch: str, now: str) -> int | None:
    """Record that `branch` of `store` was deleted, with how many live
    memories were scoped to it. Returns that count, or None when this
    deletion was already recorded moments ago or the database has no
    place for it yet (a file thatch has not upgraded: hooks never migrate)."""
    from ..clock import parse_ts

    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'thatch_cli_deleted_branches'").fetchone() is None:
        return None
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute(
            "SELECT deleted_at FROM thatch_cli_deleted_branches WHERE store = ? AND branch = ?", (store, branch)
        ).fetchone()
        if row is not None:
            then, moment = parse_ts(row[0]), parse_ts(now)
            if then and moment and 0 <= (moment - then).total_seconds() < DUPLICATE_WINDOW_S:
                conn.execute("COMMIT")
                return None
        count = live_count(conn, store, branch)
        conn.execute(
            "INSERT OR REPLACE INTO thatch_cli_deleted_branches (store, branch, deleted_at, memories)"
            " VALUES (?, ?, ?, ?)",
            (store, branch, now, count),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return count
