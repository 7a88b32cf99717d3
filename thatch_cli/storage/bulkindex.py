"""Keyword-indexing many new memories in one statement (a sync's big pull).

FTS5 writes its pending terms out at the end of every statement that
changes the index, so the insert trigger (schema.py), one statement per
row, leaves one tiny segment per memory for FTS5 to merge: most of the time
of writing 10,000 incoming memories. For such a batch the trigger is set
aside inside the caller's transaction and its effect applied once at the
end, then the trigger is put back as it was; the transaction does both, so
no other connection ever sees entries without it, and a failure rolls the
drop back with everything else."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from .schema import FTS_INSERT_TRIGGER

BATCH = 64  # fewer new rows: the trigger's own cost is small
_TRIGGER = "entries_fts_ai"
# FTS5 gives a new row max(rowid) + 1 unless that overflows (then a random
# one): with this much room left, the rows added below are those above the
# largest rowid taken before.
_ROOM = 2**62


@contextmanager
def indexed_at_end(conn: sqlite3.Connection, store: str, count: int) -> Iterator[list[str]]:
    """Inside the caller's write transaction, where about `count` memories
    will be inserted into `store`: yields the list the caller appends the
    slug of every row it INSERTs into entries (each once, not changed again
    in this transaction; updates and deletes keep their triggers). When the
    batch is big and the file's insert trigger is the one this version
    knows, the trigger is dropped until the block ends; its effect is then
    applied to those slugs as it would have been row by row: the index rows
    mapped to the key go, the row's label and text are indexed and mapped."""
    slugs: list[str] = []
    if count < BATCH or not _ready(conn):
        yield slugs
        return
    conn.execute(f"DROP TRIGGER {_TRIGGER}")
    yield slugs
    keys = json.dumps(slugs)
    conn.execute("DELETE FROM entries_fts WHERE rowid IN (SELECT fts_rowid FROM thatch_cli_fts_rows"
                 " WHERE store = ? AND slug IN (SELECT value FROM json_each(?)))", (store, keys))
    top = _top(conn)
    conn.execute("INSERT INTO entries_fts (slug, store, label, content) SELECT e.slug, e.store, e.label, e.content"
                 " FROM json_each(?) AS j JOIN entries AS e ON e.store = ? AND e.slug = j.value ORDER BY j.key",
                 (keys, store))
    conn.execute("INSERT OR REPLACE INTO thatch_cli_fts_rows (store, slug, fts_rowid)"
                 " SELECT store, slug, rowid FROM entries_fts WHERE rowid > ?", (top,))
    conn.execute(FTS_INSERT_TRIGGER)


def _top(conn: sqlite3.Connection) -> int:
    """The index's largest rowid (max(rowid) would scan it; this order FTS5 serves from its b-tree)."""
    row = conn.execute("SELECT rowid FROM entries_fts ORDER BY rowid DESC LIMIT 1").fetchone()
    return row[0] if row else 0


def _ready(conn: sqlite3.Connection) -> bool:
    """Whether the trigger can be set aside: the file has exactly the one this
    version knows, its rowids have room, and this SQLite has json_each."""
    found = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (_TRIGGER,)).fetchone()
    return found is not None and found[0] == FTS_INSERT_TRIGGER and _top(conn) <= _ROOM and _has_json(conn)


def _has_json(conn: sqlite3.Connection) -> bool:
    """Whether this SQLite has json_each (built in since 3.38, an option before)."""
    try:
        conn.execute("SELECT count(*) FROM json_each('[]')").fetchone()
    except sqlite3.OperationalError:
        return False
    return True
