"""What `thatch sync` keeps in the database (schemas 5 and 6, additive: two tables
of thatch's own, and triggers on `entries` that keep them right whoever
writes).

- `thatch_cli_sync_marks`: per memory (store, slug), the marks declared in
  memory/fields.py (table "marks"): `private` (never shared), `author` (who the
  file of an incoming version names as its author: a claim),
  `unreviewed` (came from the remote, nobody here has accepted it yet) and
  `incoming` (the current text arrived through sync: a teammate's, whatever
  its file's `author` says; recorded here, never read from the file). A
  local write of new content (thatch's or the original's) makes the memory
  this machine's own again: author NULL, reviewed, not incoming. A rename,
  move, re-scope, archive or pin carries the marks along; a forget keeps
  them (a private label stays private if it comes back).
- `thatch_cli_sync_state`: per store, the commit the store was last merged
  with (`base`), the hybrid logical clock (`hlc`) and the last sync's result.

Reading the marks works on a file of an older schema too (they are then
absent), so read-only and old databases keep working.
"""

from __future__ import annotations

import sqlite3

from ..memory import fields
from ..memory.records import MARK_FIELDS, SYNCED_FIELDS

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: every listing reads the marks (light commands)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from ..memory.records import Memory

MARKS = "thatch_cli_sync_marks"
STATE = "thatch_cli_sync_state"

# The marks' columns, as memory/fields.py declares them (table="marks").
_MARK_COLUMNS = "\n".join(f"    {f.column} {f.sql}," for f in fields.MARKS)
_MOVED = "(old.store IS NOT new.store OR old.slug IS NOT new.slug)"

_TABLES = f"""
CREATE TABLE IF NOT EXISTS {MARKS} (
    store TEXT NOT NULL,
    slug TEXT NOT NULL,
{_MARK_COLUMNS}
    PRIMARY KEY (store, slug)
);
CREATE TABLE IF NOT EXISTS {STATE} (
    store TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (store, key)
);
"""
# Provenance follows the text: a write of new content here makes the memory
# this machine's own; a move, a re-scope, an archive or a pin does not (a
# teammate's text stays a teammate's whoever files it elsewhere).
_OWN = "author = NULL, unreviewed = 0, incoming = 0"
_TRIGGERS = f"""
CREATE TRIGGER thatch_cli_sync_marks_ai AFTER INSERT ON entries BEGIN
    UPDATE {MARKS} SET {_OWN} WHERE store = new.store AND slug = new.slug;
END;
CREATE TRIGGER thatch_cli_sync_marks_au
AFTER UPDATE OF store, slug, label, content, branch, confidence, archived ON entries BEGIN
    INSERT OR REPLACE INTO {MARKS} (store, slug, {', '.join(MARK_FIELDS)})
        SELECT new.store, new.slug, {', '.join(MARK_FIELDS)} FROM {MARKS}
        WHERE store = old.store AND slug = old.slug AND {_MOVED};
    DELETE FROM {MARKS} WHERE store = old.store AND slug = old.slug AND {_MOVED};
    UPDATE {MARKS} SET {_OWN} WHERE store = new.store AND slug = new.slug AND old.content IS NOT new.content;
END;
"""
_DROP_TRIGGERS = """
DROP TRIGGER IF EXISTS thatch_cli_sync_marks_ai;
DROP TRIGGER IF EXISTS thatch_cli_sync_marks_au;
"""
MIGRATION = _TABLES + _DROP_TRIGGERS + _TRIGGERS
# Schema 6 (the `incoming` column is added first, schema.migrate): which
# memories arrived through sync was recorded before only as an author or an
# unreviewed mark (any local write cleared both), so a memory with either
# is a teammate's; every other memory was written here.
PROVENANCE = _DROP_TRIGGERS + _TRIGGERS + f"""
UPDATE {MARKS} SET incoming = 1 WHERE author IS NOT NULL OR unreviewed = 1;
"""
COLUMNS = {f.column: f.sql for f in fields.MARKS}


def _history():
    from . import history  # only a sync's writes need it

    return history


def has_marks(conn: sqlite3.Connection) -> bool:
    """Whether the file has the marks table (schema 5 and later)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MARKS,)).fetchone() is not None


def marks_of(conn: sqlite3.Connection, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], tuple]:
    """(store, slug) -> (author, private, unreviewed) of the keys that have marks."""
    found: dict[tuple[str, str], tuple] = {}
    if not keys:
        return found
    stores = sorted({store for store, _ in keys})
    wanted = set(keys)
    columns = ", ".join(MARK_FIELDS)
    if not _has_provenance(conn):  # an older file, not upgraded (read-only, or a hook): told as its upgrade tells it
        columns = columns.replace("incoming", "author IS NOT NULL OR unreviewed")
    rows: Iterable[Any]
    if len(keys) > 50:  # a listing: one pass over the stores' marks
        rows = conn.execute(f"SELECT store, slug, {columns} FROM {MARKS}"
                            f" WHERE store IN ({','.join('?' * len(stores))})", stores)
    else:
        rows = (row for key in keys for row in conn.execute(
            f"SELECT store, slug, {columns} FROM {MARKS} WHERE store = ? AND slug = ?", key))
    for store, slug, *values in rows:
        if (store, slug) in wanted:
            found[(store, slug)] = tuple(values)
    return found


def _has_provenance(conn: sqlite3.Connection) -> bool:
    return any(row[1] == "incoming" for row in conn.execute(f"PRAGMA table_info({MARKS})"))


def attach(conn: sqlite3.Connection, memories: Iterable[Memory]) -> None:
    """Give each memory its marks (author, private, unreviewed) in place."""
    memories = list(memories)
    found = marks_of(conn, [m.key for m in memories])
    for memory in memories:
        for name, value in zip(MARK_FIELDS, found.get(memory.key, ())):
            setattr(memory, name, value if name == "author" else bool(value))


def set_private(conn: sqlite3.Connection, store: str, slug: str, private: bool) -> bool:
    """Mark a memory private (or shareable) inside the caller's transaction;
    whether that changed anything."""
    before = conn.execute(f"SELECT private FROM {MARKS} WHERE store = ? AND slug = ?", (store, slug)).fetchone()
    if bool(before and before[0]) == private:
        return False
    conn.execute(f"INSERT INTO {MARKS} (store, slug, private) VALUES (?, ?, ?)"
                 " ON CONFLICT (store, slug) DO UPDATE SET private = excluded.private", (store, slug, int(private)))
    return True


def private_slugs(conn: sqlite3.Connection, store: str) -> set[str]:
    return {r[0] for r in conn.execute(f"SELECT slug FROM {MARKS} WHERE store = ? AND private = 1", (store,))}


def set_incoming(conn: sqlite3.Connection, store: str, authors: Sequence[tuple[str, str | None]],
                 unreviewed: bool) -> None:
    """Record that memories (slug, the author its file claims) just came
    from the remote (after their rows were written: the entries triggers
    reset the marks first)."""
    conn.executemany(f"INSERT INTO {MARKS} (store, slug, author, unreviewed, incoming) VALUES (?, ?, ?, ?, 1)"
                     " ON CONFLICT (store, slug) DO UPDATE SET author = excluded.author,"
                     " unreviewed = excluded.unreviewed, incoming = 1",
                     [(store, slug, author, int(unreviewed)) for slug, author in authors])


def unreviewed(conn: sqlite3.Connection, store: str) -> list[tuple[str, str | None]]:
    """(slug, author) of the live memories of `store` not reviewed yet."""
    rows = conn.execute(f"SELECT m.slug, m.author FROM {MARKS} m JOIN entries e ON e.store = m.store"
                        " AND e.slug = m.slug WHERE m.store = ? AND m.unreviewed = 1 ORDER BY e.updated_at DESC",
                        (store,))
    return [(slug, author) for slug, author in rows]


def accept(conn: sqlite3.Connection, store: str, slugs: Sequence[str]) -> int:
    """Mark incoming memories reviewed; how many were not yet."""
    return sum(conn.execute(f"UPDATE {MARKS} SET unreviewed = 0 WHERE store = ? AND slug = ? AND unreviewed = 1",
                            (store, slug)).rowcount for slug in slugs)


# -- per-store state -------------------------------------------------------------------


def state(conn: sqlite3.Connection, store: str) -> dict[str, str]:
    if not has_marks(conn):
        return {}
    return dict(conn.execute(f"SELECT key, value FROM {STATE} WHERE store = ?", (store,)).fetchall())


def set_state(conn: sqlite3.Connection, store: str, values: Mapping[str, str | None]) -> None:
    """Set (or, for None, remove) state keys inside the caller's transaction."""
    for key, value in values.items():
        if value is None:
            conn.execute(f"DELETE FROM {STATE} WHERE store = ? AND key = ?", (store, key))
        else:
            conn.execute(f"INSERT OR REPLACE INTO {STATE} (store, key, value) VALUES (?, ?, ?)", (store, key, value))


def node_id(conn: sqlite3.Connection, fresh: str) -> str:
    """This database's id in the hybrid logical clock (made once, from `fresh`)."""
    conn.execute("INSERT OR IGNORE INTO thatch_cli_meta (key, value) VALUES ('sync_node', ?)", (fresh,))
    return conn.execute("SELECT value FROM thatch_cli_meta WHERE key = 'sync_node'").fetchone()[0]


# -- applying what the merge decided ------------------------------------------------------


def rows(conn: sqlite3.Connection, store: str) -> list[dict[str, Any]]:
    """Every memory of `store` as the columns a record is made of."""
    names = ("slug", *SYNCED_FIELDS)
    return [dict(zip(names, row)) for row in conn.execute(
        f"SELECT {', '.join(names)} FROM entries WHERE store = ?", (store,))]


def deleted_at(conn: sqlite3.Connection, store: str, slug: str) -> str | None:
    """When the memory was forgotten here, from its history (None: unknown)."""
    row = conn.execute(f"SELECT max(recorded_at) FROM {_history().TABLE} WHERE memory_store = ? AND memory_slug = ?"
                       " AND event = 'deleted'", (store, slug)).fetchone()
    return row[0] if row else None


def flagged_at(conn: sqlite3.Connection, store: str, slug: str, content: str, label: str) -> str | None:
    """When a change that left the memory's label and text alone was last made (None: none since its text)."""
    return _history().changed_at(conn, store, slug, content, label)


def moved_from(conn: sqlite3.Connection, store: str, slug: str) -> tuple[str, str] | None:
    """(slug now, when) of the memory renamed away from `slug`, when that is the slug's latest event."""
    return _history().moved_from(conn, store, slug)


_CHUNK = 500  # parameters per statement: under SQLite's oldest limit (999)


def current(conn: sqlite3.Connection, store: str, slugs: Sequence[str]) -> dict[str, tuple]:
    """slug -> its SYNCED_FIELDS now, of those of `slugs` that exist: what
    the merge read must still hold for its change to be applied. A few
    statements for a big pull, not one per memory."""
    found: dict[str, tuple] = {}
    columns = ", ".join(SYNCED_FIELDS)
    for start in range(0, len(slugs), _CHUNK):
        chunk = slugs[start:start + _CHUNK]
        for slug, *values in conn.execute(f"SELECT slug, {columns} FROM entries WHERE store = ?"
                                          f" AND slug IN ({','.join('?' * len(chunk))})", (store, *chunk)):
            found[slug] = tuple(values)
    return found


def insert_new(conn: sqlite3.Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """INSERT entries rows that do not exist yet (column name -> value),
    one prepared statement per set of columns: a big pull's thousands of
    new memories without a Python round trip per row. Their triggers run as
    for any insert."""
    groups: dict[tuple[str, ...], list[tuple]] = {}
    for row in rows:
        groups.setdefault(tuple(row), []).append(tuple(row.values()))
    for names, values in groups.items():
        quoted = ", ".join('"' + name + '"' for name in names)
        conn.executemany(f"INSERT INTO entries ({quoted}) VALUES ({','.join('?' * len(names))})", values)


def delete(conn: sqlite3.Connection, store: str, slug: str) -> None:
    conn.execute("DELETE FROM entries WHERE store = ? AND slug = ?", (store, slug))
    conn.execute("DELETE FROM dedup_pairs WHERE store = ? AND (slug_a = ? OR slug_b = ?)", (store, slug, slug))


def keep_version(conn: sqlite3.Connection, values: Mapping[str, Any], event: str, now: str) -> None:
    """Keep `values` (an entries row) as the newest version of its memory,
    without making it current: a concurrent version that lost a merge."""
    key = (values["store"], values["slug"])
    number = conn.execute(f"SELECT coalesce(max(version), 0) + 1 FROM {_history().TABLE} WHERE memory_store = ?"
                          " AND memory_slug = ?", key).fetchone()[0]
    _history().import_row(conn, {**{c: values.get(c) for c in _history().COLUMNS}, "memory_store": key[0],
                              "memory_slug": key[1], "version": number, "event": event, "recorded_at": now})
