"""What the machine-facing hot paths (shell prompt, git hooks, completion,
agent hooks) read and write. Standard library only, on raw connections, no
thatch records: these paths have a 50 ms budget and must never create,
upgrade or wait long on a database.
"""

from __future__ import annotations

import os
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


def connect_readonly(path: Path, **options) -> sqlite3.Connection:
    """A read-only connection to an existing file (sqlite3.connect's `options`)."""
    return sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, **options)


def open_readonly(path: Path, timeout: float = 0.5, check_same_thread: bool = True) -> sqlite3.Connection | None:
    """The database opened read-only, or None when there is none or it cannot
    be opened: a hook never creates or upgrades it, and waits on a writer
    for at most `timeout` seconds. On a read-only mount SQLite cannot create
    the shared-memory file a write-ahead-log database needs; with no log to
    merge the file is then read as immutable (nobody can be writing it)."""
    try:
        if not path.is_file():
            return None
        conn = connect_readonly(path, timeout=timeout, check_same_thread=check_same_thread)
        try:
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            return conn
        except sqlite3.OperationalError:
            conn.close()
            wal = path.with_name(path.name + "-wal")
            if wal.exists() and wal.stat().st_size or os.access(path.parent, os.W_OK):
                return None  # a log to merge, or a writer's lock: not ours to bypass
        return sqlite3.connect(f"{path.absolute().as_uri()}?immutable=1", uri=True, timeout=timeout,
                               check_same_thread=check_same_thread)
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


def has_vectors(conn: sqlite3.Connection, store: str) -> bool:
    """Whether any live memory of `store` has a vector (of any model: recall
    there embeds its query either way)."""
    row = conn.execute(
        "SELECT 1 FROM entries WHERE store = ? AND archived = 0 AND embedding IS NOT NULL LIMIT 1", (store,)
    ).fetchone()
    return row is not None


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


def records_deletions(conn: sqlite3.Connection) -> bool:
    """Whether the file has the table of deleted branches (a file no thatch
    command has upgraded has not: hooks never migrate)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'thatch_cli_deleted_branches'").fetchone() is not None


def record_deletion(conn: sqlite3.Connection, store: str, branch: str, now: str, git_pid: int | None = None) -> int | None:
    """Record that `branch` of `store` was deleted, with how many live
    memories were scoped to it. Returns that count, or None when this
    deletion was already recorded (the same git process, or without its pid
    moments ago) or the database has no place for it yet (a file thatch has
    not upgraded: hooks never migrate). A branch recreated and deleted
    again by another git command is a new deletion, however soon."""
    from ..clock import parse_ts

    if not records_deletions(conn):
        return None
    columns = {row[1] for row in conn.execute("PRAGMA table_info(thatch_cli_deleted_branches)")}
    with_pid = "git_pid" in columns
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute(
            f"SELECT deleted_at, {'git_pid' if with_pid else 'NULL'} FROM thatch_cli_deleted_branches"
            " WHERE store = ? AND branch = ?", (store, branch)
        ).fetchone()
        if row is not None:
            then, moment = parse_ts(row[0]), parse_ts(now)
            recent = then and moment and 0 <= (moment - then).total_seconds() < DUPLICATE_WINDOW_S
            same_command = git_pid is None or row[1] is None or row[1] == git_pid
            if recent and same_command:
                conn.execute("COMMIT")
                return None
        count = live_count(conn, store, branch)
        if with_pid:
            conn.execute(
                "INSERT OR REPLACE INTO thatch_cli_deleted_branches (store, branch, deleted_at, memories, git_pid)"
                " VALUES (?, ?, ?, ?, ?)", (store, branch, now, count, git_pid))
        else:
            conn.execute(
                "INSERT OR REPLACE INTO thatch_cli_deleted_branches (store, branch, deleted_at, memories)"
                " VALUES (?, ?, ?, ?)", (store, branch, now, count))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return count
