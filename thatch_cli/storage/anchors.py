"""Anchors: the code a memory describes (schema 6, additive: one table of
thatch's own beside `entries`, which the original thatch neither reads nor
drops).

One row per (memory, path, line range): the path relative to the
repository's top level, the range (NULL for the whole file), the commit
HEAD was at, the file's blob id, and for line-level drift the hashes of the
anchored lines. Triggers keep the rows with their memory whoever writes:
a rename or move carries them along, a delete takes them. An overwrite
updates the row in place (MemoryDB.write_row), so its anchors stay.
"""

from __future__ import annotations

import sqlite3

from .fastread import LIVE

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: show and recall read anchors
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from contextlib import AbstractContextManager
    from typing import Protocol

    class MemoryDB(Protocol):
        """What anchors need of storage.memories.MemoryDB (which imports this
        module's migration through the schema, so it is not imported here)."""

        conn: sqlite3.Connection

        def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def exists(self, store: str, slug: str) -> bool: ...

TABLE = "thatch_cli_anchors"

# The columns of one anchor, in the order rows are read and written.
COLUMNS = ("path", "start_line", "end_line", "commit_id", "blob", "fingerprint", "line_hashes", "anchored_at")

MIGRATION = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    store TEXT NOT NULL,
    slug TEXT NOT NULL,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL DEFAULT 0,
    end_line INTEGER NOT NULL DEFAULT 0,
    commit_id TEXT,
    blob TEXT NOT NULL,
    fingerprint TEXT,
    line_hashes TEXT,
    anchored_at TEXT NOT NULL,
    PRIMARY KEY (store, slug, path, start_line, end_line)
);
CREATE TRIGGER IF NOT EXISTS thatch_cli_anchors_au AFTER UPDATE OF store, slug ON entries
WHEN old.store IS NOT new.store OR old.slug IS NOT new.slug BEGIN
    UPDATE OR REPLACE {TABLE} SET store = new.store, slug = new.slug WHERE store = old.store AND slug = old.slug;
END;
CREATE TRIGGER IF NOT EXISTS thatch_cli_anchors_ad AFTER DELETE ON entries BEGIN
    DELETE FROM {TABLE} WHERE store = old.store AND slug = old.slug;
END;
"""

# A whole-file anchor is stored with range 0-0 (a key column cannot be NULL
# and still tell two whole-file anchors of one path apart).
Row = tuple  # (path, start_line | None, end_line | None, commit_id, blob, fingerprint, line_hashes, anchored_at)


def _present(conn: sqlite3.Connection) -> bool:
    """A file of an older schema (read-only, or the original's) has no table: no anchors."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone() is not None


def _read(row: Sequence) -> Row:
    path, start, end, *rest = row
    return (path, start or None, end or None, *rest)


def of_memories(db: MemoryDB, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[Row]]:
    """The anchors of each memory in `keys` (only those that have any), by path then range."""
    wanted = list(dict.fromkeys(keys))
    if not wanted or not _present(db.conn):
        return {}
    found: dict[tuple[str, str], list[Row]] = {}
    names = ", ".join(COLUMNS)
    if len(wanted) > 50:
        # Many memories (a hygiene pass, a large recall): one scan of their stores beats a long OR.
        keys, stores = set(wanted), sorted({store for store, _ in wanted})
        for row in db.conn.execute(f"SELECT store, slug, {names} FROM {TABLE}"
                                   f" WHERE store IN ({', '.join('?' for _ in stores)})"
                                   " ORDER BY store, slug, path, start_line, end_line", stores):
            if (row[0], row[1]) in keys:
                found.setdefault((row[0], row[1]), []).append(_read(row[2:]))
        return found
    for start in range(0, len(wanted), 400):
        chunk = wanted[start:start + 400]
        where = " OR ".join("(store = ? AND slug = ?)" for _ in chunk)
        args = [value for key in chunk for value in key]
        for row in db.conn.execute(f"SELECT store, slug, {names} FROM {TABLE} WHERE {where}"
                                   " ORDER BY path, start_line, end_line", args):
            found.setdefault((row[0], row[1]), []).append(_read(row[2:]))
    return found


def in_stores(db: MemoryDB, stores: Sequence[str]) -> dict[tuple[str, str], list[Row]]:
    """Every anchor of the live memories of `stores`, by memory."""
    found: dict[tuple[str, str], list[Row]] = {}
    for store, slug, _label, row in live(db.conn, stores):
        found.setdefault((store, slug), []).append(row)
    return found


def live(conn: sqlite3.Connection, stores: Sequence[str], limit: int = -1) -> list[tuple[str, str, str, Row]]:
    """(store, slug, label, anchor row) of the live memories of `stores`, at
    most `limit` rows (-1: all); on any connection, the hot paths' raw
    read-only one too."""
    if not stores or not _present(conn):
        return []
    names = ", ".join(f"a.{c}" for c in COLUMNS)
    return [(row[0], row[1], row[2], _read(row[3:])) for row in conn.execute(
        f"SELECT a.store, a.slug, e.label, {names} FROM {TABLE} a JOIN entries e"
        " ON e.store = a.store AND e.slug = a.slug"
        f" WHERE a.store IN ({', '.join('?' for _ in stores)}) AND e.{LIVE}"
        " ORDER BY a.store, a.slug, a.path, a.start_line LIMIT ?", [*stores, limit])]


def replace(db: MemoryDB, store: str, slug: str, rows: Sequence[Row], *, keep_others: bool) -> None:
    """Write `rows` as anchors of (store, slug) in one transaction: in
    addition to the ones it has (`keep_others`; an anchor of the same path and
    range is replaced), or instead of them."""
    with db.transaction() as conn:
        if not _present(conn):
            from ..support.errors import DatabaseError

            raise DatabaseError("this database has no table for anchors (opened read-only at an older schema)")
        write(conn, store, slug, rows, keep_others=keep_others)


def write(conn: sqlite3.Connection, store: str, slug: str, rows: Sequence[Row], *, keep_others: bool) -> None:
    """`replace` inside the caller's transaction (thatch sync writes a memory and its anchors in one)."""
    if not keep_others:
        conn.execute(f"DELETE FROM {TABLE} WHERE store = ? AND slug = ?", (store, slug))
    for path, start, end, *rest in rows:
        conn.execute(f"INSERT OR REPLACE INTO {TABLE} (store, slug, {', '.join(COLUMNS)})"
                     f" VALUES (?, ?, {', '.join('?' for _ in COLUMNS)})",
                     (store, slug, path, start or 0, end or 0, *rest))


def write_many(conn: sqlite3.Connection, store: str, anchored: Sequence[tuple[str, Sequence[Row]]]) -> None:
    """Inside the caller's transaction, make each (slug, rows) the only
    anchors of (store, slug): a sync's incoming memories, in two prepared
    statements however many there are."""
    conn.executemany(f"DELETE FROM {TABLE} WHERE store = ? AND slug = ?", [(store, slug) for slug, _ in anchored])
    conn.executemany(f"INSERT OR REPLACE INTO {TABLE} (store, slug, {', '.join(COLUMNS)})"
                     f" VALUES (?, ?, {', '.join('?' for _ in COLUMNS)})",
                     [(store, slug, path, start or 0, end or 0, *rest)
                      for slug, rows in anchored for path, start, end, *rest in rows])


def remove(db: MemoryDB, store: str, slug: str, path: str | None = None) -> int:
    """Delete the anchors of (store, slug), or only those on `path`; how many went."""
    with db.transaction() as conn:
        if not _present(conn):
            return 0
        if path is None:
            return conn.execute(f"DELETE FROM {TABLE} WHERE store = ? AND slug = ?", (store, slug)).rowcount
        return conn.execute(f"DELETE FROM {TABLE} WHERE store = ? AND slug = ? AND path = ?",
                            (store, slug, path)).rowcount


def export_rows(db: MemoryDB, stores: Sequence[str] | None) -> list[dict]:
    """Every anchor of `stores` (None: all), one dict each, for an export."""
    if not _present(db.conn):
        return []
    where, args = "", []
    if stores is not None:
        where, args = f"WHERE store IN ({', '.join('?' for _ in stores)})", list(stores)
    names = ("store", "slug", *COLUMNS)
    return [dict(zip(names, row)) for row in db.conn.execute(
        f"SELECT {', '.join(names)} FROM {TABLE} {where} ORDER BY store, slug, path, start_line, end_line", args)]


def import_rows(db: MemoryDB, records: Sequence[tuple[int, dict]], *, overwrite: bool,
                failed: Callable[[int, str], None]) -> int:
    """Write imported anchors (line, values) in one transaction: only onto a
    memory the store has (written earlier in the import, or before), an
    anchor it already has kept unless `overwrite`. Returns how many were written."""
    if not records:
        return 0
    written = 0
    verb = "INSERT OR REPLACE" if overwrite else "INSERT OR IGNORE"
    names = ("store", "slug", *COLUMNS)
    with db.transaction() as conn:
        if not _present(conn):
            return 0
        for line, values in records:
            if not db.exists(values["store"], values["slug"]):
                failed(line, f"no memory {values['slug']!r} in {values['store']} to anchor")
                continue
            written += conn.execute(f"{verb} INTO {TABLE} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                                    [values[n] for n in names]).rowcount
    return written
