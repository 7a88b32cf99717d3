"""Schema objects neither thatch nor the original thatch defines.

A database file can carry code: a trigger runs inside every write that
fires it, whoever makes the write. A file thatch did not create (the
original's, an older thatch's, a restored backup) is therefore checked
before thatch trusts it: every trigger, view and index must be one that
thatch (any schema version) or the original creates, with the same
definition. Anything else is dropped, inside the transaction that upgrades
or restores the file, and named to the user. Those objects hold no data, so
dropping them loses nothing (the verified backup taken first keeps them).

Tables are data, not code: one neither tool defines (a newer original's,
another program's) is kept and named, never dropped.

The original's objects are its tables (its src/db.ts creates no triggers,
views or indexes of its own); thatch's are whatever its migrations create,
read back from an in-memory database built with them, so a new migration
needs no list kept by hand.
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache

from . import schema

# The tables the original thatch creates (its current schema, and `locks`
# from earlier releases).
ORIGINAL_TABLES = frozenset({
    "stores", "entries", "dedup_pairs", "locks",
    "prediction_matchers", "predictions", "prediction_edges", "prediction_provenance",
    "behavior_matchers", "behaviors", "behavior_edges", "behavior_provenance",
})
_CODE = ("trigger", "view", "index")


def _normal(sql: str | None) -> str:
    return " ".join((sql or "").split()).lower()


@lru_cache(maxsize=1)
def known() -> tuple[frozenset, frozenset]:
    """(tables, {(type, name, definition)}) thatch's migrations create, at
    every schema version from 1 to the current one."""
    tables: set[str] = set()
    code: set[tuple[str, str, str]] = set()
    for version in range(1, schema.SCHEMA_VERSION + 1):
        conn = sqlite3.connect(":memory:", isolation_level=None)
        try:
            schema.migrate(conn, 0, version)
            for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master"):
                if kind == "table":
                    tables.add(name)
                elif kind in _CODE:
                    code.add((kind, name, _normal(sql)))
        finally:
            conn.close()
    return frozenset(tables), frozenset(code)


def _current_code() -> list[tuple[str, str, str, str]]:
    """(type, name, table, sql) of every trigger and index the current schema has."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        schema.migrate(conn, 0)
        return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('trigger', 'index')"
                            " AND sql IS NOT NULL ORDER BY type DESC, name").fetchall()
    finally:
        conn.close()


class Found:
    """What a file holds beyond thatch's and the original's schema: code
    objects to drop, and tables to keep."""

    __slots__ = ("code", "tables")

    def __init__(self, code: list[tuple[str, str]], tables: list[str]) -> None:
        self.code, self.tables = code, [_shown(name) for name in tables]

    def __bool__(self) -> bool:
        return bool(self.code)

    def names(self) -> list[str]:
        """['trigger evil', 'view spy'], safe to show."""
        return [f"{kind} {_shown(name)}" for kind, name in self.code]

    def describe(self) -> str:
        return ", ".join(self.names())


def find(conn: sqlite3.Connection) -> Found:
    tables, code = known()
    ours = tables | ORIGINAL_TABLES
    found, strange = [], []
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
    for kind, name, table, sql in rows:
        if name.startswith("sqlite_"):
            continue  # SQLite's own: automatic indexes, sqlite_sequence, sqlite_stat*
        if kind == "table":
            if name not in ours:
                strange.append(name)
        elif kind == "index" and table not in ours:
            continue  # belongs to a table we keep as it is
        elif (kind, name, _normal(sql)) not in code:
            found.append((kind, name))
    return Found(found, strange)


def strip(conn: sqlite3.Connection, found: Found) -> None:
    """Drop `found`'s code objects, inside the caller's write transaction."""
    for kind, name in found.code:
        conn.execute(f"DROP {kind.upper()} IF EXISTS {_quoted(name)}")


def restore_own(conn: sqlite3.Connection) -> None:
    """Create any trigger or index of the current schema the file lacks (one
    of thatch's whose definition had been changed was dropped by strip), in
    a file at the current schema, inside the caller's write transaction."""
    existing = set(conn.execute("SELECT type, name FROM sqlite_master"))
    for kind, name, _table, sql in _current_code():
        if (kind, name) not in existing:
            conn.execute(sql)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _shown(name: str) -> str:
    printable = "".join(ch if ch.isprintable() else "?" for ch in name)
    return printable if len(printable) <= 60 else printable[:57] + "..."
