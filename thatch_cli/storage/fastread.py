"""Fast reads: the storage questions answered on a raw connection, with
the standard library only, for the hot paths (the shell hook, git hooks,
completion, agent hooks) and for MemoryDB alike.

The hot paths have a 50 ms budget and must never create, upgrade or wait
long on a database, so they open it here and ask these functions. MemoryDB
(memories.py) asks the same functions, and builds its other queries on the
same conditions (STORES, LIVE, UNSCOPED), so "which stores exist" and
"which memories are live" have one answer whoever asks. The one write here
is the git hooks' record of a deleted branch.
"""

from __future__ import annotations

import os
import sqlite3

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Sequence

# Git runs reference-transaction more than once per deletion; a second
# record of the same branch this soon after the first is the same deletion.
DUPLICATE_WINDOW_S = 120

# Every store: those registered in `stores`, and any that only rows name (a
# file another program wrote may skip the `stores` table). One column, name.
STORES = "SELECT name FROM stores UNION SELECT store FROM entries"
# A live memory (recall, counts, the reminder): not archived.
LIVE = "archived = 0"
# Scoped to no branch.
UNSCOPED = "(branch IS NULL OR branch = '')"


def _marks(values: Sequence) -> str:
    return ",".join("?" * len(values))


def foreign_journal(path: str | os.PathLike) -> str | None:
    """Why the database or the -wal or -shm file beside it (after any
    symlink) cannot be trusted, or None: the database belongs to another
    user and lies in a directory every user can write (anyone could have
    planted it), a journal belongs to someone other than the database's
    owner and this user (in a directory others can write, they could plant
    one and SQLite would read it as part of the database), or a journal is
    not a regular file."""
    import stat

    real = os.path.realpath(path)
    try:
        owner = os.stat(real).st_uid
        folder = os.path.dirname(real)
        shared = os.stat(folder).st_mode & 0o002
    except OSError:
        return None
    if owner != os.geteuid() and shared:
        # The same threat as another user's -wal: anyone could have made it.
        return (f"{real} belongs to uid {owner}, not to you, in {folder}, which every user can write")
    for suffix in ("-wal", "-shm"):
        try:
            st = os.lstat(real + suffix)
        except OSError:
            continue
        if st.st_uid not in (owner, os.geteuid()):
            return f"{real}{suffix} belongs to uid {st.st_uid}, not to the database's owner (uid {owner})"
        if not stat.S_ISREG(st.st_mode):
            return f"{real}{suffix} is not a regular file"
    return None


# What each byte of a path becomes in an SQLite URI (file_uri).
_URI_BYTES = [chr(b) if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "/-._~") else f"%{b:02X}"
              for b in range(256)]


def file_uri(path: str | os.PathLike) -> str:
    """An SQLite URI for the file `path`, every byte but letters, digits and
    "/-._~" percent-encoded (as Path.as_uri does, so a name that is not
    UTF-8 opens too), built here because the hot paths spare themselves
    pathlib and urllib (~8 ms per process)."""
    # Joined, not os.path.abspath: "link/.." must go through the symlink, as
    # the file system (and Path.absolute) would.
    raw = os.fsencode(os.path.join(os.getcwd(), os.fspath(path)))
    # An empty authority ("file://" then the absolute path), also for a path
    # that starts with two slashes, which would otherwise read as a host.
    return "file://" + "".join(_URI_BYTES[byte] for byte in raw)


def connect_readonly(path: str | os.PathLike, **options) -> sqlite3.Connection:
    """A read-only connection to an existing file (sqlite3.connect's `options`)."""
    return sqlite3.connect(f"{file_uri(path)}?mode=ro", uri=True, **options)


def open_readonly(path: str | os.PathLike, timeout: float = 0.5,
                  check_same_thread: bool = True) -> sqlite3.Connection | None:
    """The database opened read-only, or None when there is none or it cannot
    be opened: a hook never creates or upgrades it, and waits on a writer
    for at most `timeout` seconds. On a read-only mount SQLite cannot create
    the shared-memory file a write-ahead-log database needs; with no log to
    merge the file is then read as immutable (nobody can be writing it)."""
    try:
        if not os.path.isfile(path):
            return None
        conn = connect_readonly(path, timeout=timeout, check_same_thread=check_same_thread)
        try:
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            if foreign_journal(path) is not None:
                conn.close()
                return None
            return conn
        except sqlite3.OperationalError:
            conn.close()
            wal = os.fspath(path) + "-wal"
            folder = os.path.dirname(os.path.join(os.getcwd(), os.fspath(path)))
            if os.path.exists(wal) and os.path.getsize(wal) or os.access(folder, os.W_OK):
                return None  # a log to merge, or a writer's lock: not ours to bypass
        return sqlite3.connect(f"{file_uri(path)}?immutable=1", uri=True, timeout=timeout,
                               check_same_thread=check_same_thread)
    except (OSError, ValueError, sqlite3.Error):
        return None


def open_writable(path: str | os.PathLike, timeout: float = 1.0) -> sqlite3.Connection | None:
    """The existing database opened for a short write (autocommit mode), or
    None when there is none. Never creates or upgrades it."""
    try:
        if not os.path.isfile(path):
            return None
        if foreign_journal(path) is not None:
            return None
        conn = sqlite3.connect(path, isolation_level=None, timeout=timeout)
        conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        return conn
    except (OSError, sqlite3.Error):
        return None


def branch_counts(conn: sqlite3.Connection, store: str) -> dict[str | None, int]:
    """Live memories per branch (None = unscoped) of one store."""
    rows = conn.execute(
        f"SELECT NULLIF(branch, ''), count(*) FROM entries WHERE store = ? AND {LIVE} GROUP BY 1",
        (store,),
    )
    return {branch: count for branch, count in rows}


def has_vectors(conn: sqlite3.Connection, store: str) -> bool:
    """Whether any live memory of `store` has a vector (of any model: recall
    there embeds its query either way)."""
    row = conn.execute(
        f"SELECT 1 FROM entries WHERE store = ? AND {LIVE} AND embedding IS NOT NULL LIMIT 1", (store,)
    ).fetchone()
    return row is not None


def live(conn: sqlite3.Connection, store: str, columns: Sequence[str], **equal: object) -> list[tuple]:
    """`columns` of the live memories of `store` whose fields have the given
    values (`branch="main"`), newest first. A field a file not yet upgraded
    lacks matches nothing."""
    where = "".join(f' AND "{name}" = ?' for name in equal)
    selected = ", ".join(f'"{column}"' for column in columns)
    try:
        return conn.execute(f"SELECT {selected} FROM entries WHERE store = ? AND {LIVE}{where}"
                            " ORDER BY updated_at DESC, slug", [store, *equal.values()]).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such column" in str(exc):
            return []
        raise


def values_query(column: str, stores: Sequence[str]) -> tuple[str, list[str]]:
    """The query (SQL, parameters) of `values`, for a reader that skips rows it cannot decode."""
    return (f'SELECT DISTINCT "{column}" FROM entries WHERE store IN ({_marks(stores)})'
            f' AND "{column}" IS NOT NULL AND "{column}" != \'\' ORDER BY 1', list(stores))


def values(conn: sqlite3.Connection, column: str, stores: Sequence[str]) -> list[str]:
    """The distinct non-empty values of a column of `entries` (a field's,
    memory/fields.py) among the memories of `stores`, archived included, sorted:
    the labels or branches completion offers."""
    return [r[0] for r in conn.execute(*values_query(column, stores))]


STORE_NAMES = f"{STORES} ORDER BY 1"
# (name, memories, last update) of every store (STORES), by name.
STORE_SUMMARIES = f"""SELECT s.name, count(e.slug), max(e.updated_at)
                      FROM ({STORES}) s LEFT JOIN entries e ON e.store = s.name
                      GROUP BY s.name ORDER BY s.name"""


def store_names(conn: sqlite3.Connection) -> list[str]:
    """Every store (STORES), by name."""
    return [r[0] for r in conn.execute(STORE_NAMES)]


def store_exists(conn: sqlite3.Connection, name: str) -> bool:
    """Whether `name` is one of STORES (asked without listing them all)."""
    return conn.execute("SELECT 1 FROM stores WHERE name = ? UNION ALL SELECT 1 FROM entries WHERE store = ? LIMIT 1",
                        (name, name)).fetchone() is not None


def store_summaries(conn: sqlite3.Connection) -> list[tuple[str, int, str | None]]:
    """STORE_SUMMARIES' rows."""
    return conn.execute(STORE_SUMMARIES).fetchall()


def top_memories(conn: sqlite3.Connection, store: str, limit: int) -> list[tuple[str, int, int | None]]:
    """(label, recall count, confidence) of the store's unscoped live
    memories an agent uses most: most recalled, then most confident, then newest."""
    rows = conn.execute(
        f"SELECT label, recall_count, confidence FROM entries WHERE store = ? AND {LIVE}"
        f" AND {UNSCOPED} AND (recall_count > 0 OR confidence IS NOT NULL)"
        " ORDER BY recall_count DESC, COALESCE(confidence, 0) DESC, updated_at DESC, slug LIMIT ?",
        (store, limit))
    return [(label, count or 0, confidence) for label, count, confidence in rows]


def incoming(conn: sqlite3.Connection, store: str, limit: int) -> list[tuple[str, str | None, bool]]:
    """(label, claimed author, unreviewed) of the live memories of `store`
    that came from a teammate (thatch sync), unreviewed first, newest first
    (on an older file not upgraded yet, told as its upgrade will tell it);
    none on a file without sync's marks."""
    for shared in ("m.incoming = 1", "(m.author IS NOT NULL OR m.unreviewed = 1)"):
        try:
            rows = conn.execute(
                "SELECT e.label, m.author, m.unreviewed FROM thatch_cli_sync_marks m JOIN entries e"
                f" ON e.store = m.store AND e.slug = m.slug WHERE m.store = ? AND {shared}"
                " AND e.archived = 0 ORDER BY m.unreviewed DESC, e.updated_at DESC, e.slug LIMIT ?", (store, limit))
            return [(label, author, bool(flag)) for label, author, flag in rows]
        except sqlite3.OperationalError as exc:
            if "m.incoming" not in str(exc):
                return []
    return []


def pinned(conn: sqlite3.Connection, store: str) -> list[tuple[str, str, bool, bool, str | None]]:
    """(label, content, unreviewed, incoming, claimed author) of the live
    pinned memories of `store`, newest first: a teammate's is named as one,
    and its text withheld while not reviewed here (a pin is no review). On
    an older file, not upgraded yet, what came through sync is told as
    its upgrade will tell it; a file without sync's marks never synced."""
    select = ("SELECT e.label, e.content, coalesce(m.unreviewed, 0), {incoming}, m.author FROM entries e"
              " LEFT JOIN thatch_cli_sync_marks m ON m.store = e.store AND m.slug = e.slug"
              f" WHERE e.store = ? AND {LIVE} AND e.pinned = 1 ORDER BY e.updated_at DESC, e.slug")
    for incoming in ("coalesce(m.incoming, 0)", "m.author IS NOT NULL OR coalesce(m.unreviewed, 0)"):
        try:
            return [(label, content, bool(unreviewed), bool(shared), author) for label, content, unreviewed, shared,
                    author in conn.execute(select.format(incoming=incoming), (store,))]
        except sqlite3.OperationalError as exc:
            if "no such column: m.incoming" in str(exc):
                continue
            if "thatch_cli_sync_marks" in str(exc):
                return [(label, content, False, False, None)
                        for label, content in live(conn, store, ("label", "content"), pinned=1)]
            return []  # no pinned column yet: nothing is pinned
    return []


def branch_counts_and_stale(conn: sqlite3.Connection, store: str, cutoff: str) -> tuple[dict[str | None, int], int]:
    """branch_counts, and how many of those live memories were neither
    updated nor recalled since `cutoff` (an ISO timestamp; thatch's
    timestamps sort as text), in one pass over the store."""
    rows = conn.execute(
        "SELECT NULLIF(branch, ''), count(*), sum(max(updated_at, COALESCE(last_recalled_at, '')) < ?)"
        f" FROM entries WHERE store = ? AND {LIVE} GROUP BY 1", (cutoff, store)).fetchall()
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
        f"SELECT count(*) FROM entries WHERE store = ? AND branch = ? AND {LIVE}", (store, branch)
    ).fetchone()
    return int(row[0])


def live_counts(conn: sqlite3.Connection, store: str) -> dict[str, int]:
    """branch -> live_count(conn, store, branch), for every branch of the store that has memories."""
    rows = conn.execute(
        f"SELECT branch, count(*) FROM entries WHERE store = ? AND NOT {UNSCOPED} AND {LIVE} GROUP BY branch",
        (store,),
    ).fetchall()
    return {str(branch): int(n) for branch, n in rows}


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
    from ..support.clock import parse_ts

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


def summary(path: Path) -> dict | None:
    """What `thatch status` says of a database file, read without changing it
    (None when there is none or it cannot be read): thatch's schema version
    (0: the original's format), memories (archived included), stores, and
    the stored vectors by model ({model or None: count})."""
    conn = open_readonly(path, timeout=1.0)
    if conn is None:
        return None
    try:
        try:
            row = conn.execute("SELECT value FROM thatch_cli_meta WHERE key = 'schema_version'").fetchone()
            schema = int(row[0]) if row else 0
        except sqlite3.OperationalError:
            schema = 0
        memories = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        stores = conn.execute("SELECT count(*) FROM (SELECT name FROM stores UNION SELECT store FROM entries)"
                              ).fetchone()[0]
        models = dict(conn.execute("SELECT model, count(*) FROM entries WHERE embedding IS NOT NULL"
                                   " GROUP BY model").fetchall())
        models[None] = memories - sum(models.values())
        return {"schema": schema, "memories": memories, "stores": stores, "models": models}
    except sqlite3.Error:
        return None
    finally:
        conn.close()
