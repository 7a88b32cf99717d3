"""Earlier versions of memories: the additive table `thatch_cli_history`.

Triggers on `entries` copy a memory's row into the history before anything
changes it, so every writer is covered: thatch's own commands, whatever
commands are added later, the original thatch and plain SQL. What counts
as a change: an update of label, content, branch, confidence, archived,
slug or store (recall stamps and re-embedding are not versions), a
delete, and a row about to be replaced by `INSERT OR REPLACE` (that
delete fires no trigger, so a BEFORE INSERT trigger copies it first).

History rows are keyed by the memory's current (store, slug): a rename or
move carries the memory's history along. The columns a version keeps and
what counts as a change come from memory/fields.py (`history`, `versioned`); a
field added there gets its column here, and the triggers are rebuilt, when
a file is upgraded (`install`). Versions count 1, 2, ... per
memory and are never reused. A copy identical to the newest one already
kept is skipped (an upsert fires both the insert and the update trigger).
Retention: the newest `history_keep` versions per memory are kept (meta key,
set from the configuration by MemoryDB; default DEFAULT_KEEP; 0 keeps none).
The original thatch never reads this table.
"""

from __future__ import annotations

from ..memory import fields
from ..support.settings import HISTORY_KEEP as DEFAULT_KEEP

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

# The columns of a memory a version keeps, in entries' names.
COLUMNS = tuple(f.column for f in fields.HISTORY)
# What makes two versions different (telemetry and vectors do not); a save
# at another moment is another version even when nothing else changed.
_COMPARED = tuple(f.column for f in fields.VERSIONED) + ("updated_at",)
_NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
TABLE = _TABLE = "thatch_cli_history"


def _copy(source: str, key_store: str, key_slug: str, event: str, where: str = "") -> str:
    """INSERT of `source`'s row (old, or e for a FROM clause in `where`) as the
    next version of the memory keyed (key_store, key_slug), unless the newest
    version kept is the same."""
    keyed = f"memory_store = {key_store} AND memory_slug = {key_slug}"
    same = " AND ".join(f"h.{c} IS {source}.{c}" for c in _COMPARED)
    values = ", ".join(f"{source}.{c}" for c in COLUMNS)
    condition = f"""NOT EXISTS (SELECT 1 FROM {_TABLE} h WHERE h.{keyed.replace(' AND ', ' AND h.')}
        AND h.version = (SELECT max(version) FROM {_TABLE} WHERE {keyed}) AND {same})"""
    return f"""INSERT INTO {_TABLE} (memory_store, memory_slug, version, event, recorded_at, {', '.join(COLUMNS)})
    SELECT {key_store}, {key_slug}, coalesce((SELECT max(version) FROM {_TABLE} WHERE {keyed}), 0) + 1,
        '{event}', {_NOW}, {values}
    {where + ' AND' if where else 'WHERE'} {condition};"""


_CHANGED = " OR ".join(f"old.{c} IS NOT new.{c}" for c in _COMPARED if c != "updated_at")

# Snapshot columns carry no constraints (only the field's type): a history
# row must never make a write to entries fail, whichever program makes it.
SNAPSHOT = {f.column: f.sql.split()[0] for f in fields.HISTORY}

# The table (schema 4); a file's table gains the columns of fields added
# since (schema.py adds what SNAPSHOT has and the table lacks).
MIGRATION = f"""
CREATE TABLE IF NOT EXISTS {_TABLE} (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_store TEXT NOT NULL,
    memory_slug TEXT NOT NULL,
    version INTEGER NOT NULL,
    event TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    {', '.join(f"{column} {decl}" for column, decl in SNAPSHOT.items())}
);
CREATE INDEX IF NOT EXISTS thatch_cli_history_memory ON {_TABLE} (memory_store, memory_slug, version);
"""

# Dropped and created again on every upgrade, so they copy every kept field
# and compare every versioned one.
TRIGGERS = f"""
DROP TRIGGER IF EXISTS thatch_cli_history_bi;
DROP TRIGGER IF EXISTS thatch_cli_history_au;
DROP TRIGGER IF EXISTS thatch_cli_history_ad;
DROP TRIGGER IF EXISTS thatch_cli_history_keep;
CREATE TRIGGER thatch_cli_history_bi BEFORE INSERT ON entries BEGIN
    {_copy("e", "new.store", "new.slug", "replaced", "FROM entries e WHERE e.store = new.store AND e.slug = new.slug")}
END;
CREATE TRIGGER thatch_cli_history_au AFTER UPDATE ON entries WHEN {_CHANGED} BEGIN
    UPDATE {_TABLE} SET memory_store = new.store, memory_slug = new.slug,
        version = version + coalesce((SELECT max(version) FROM {_TABLE}
                                      WHERE memory_store = new.store AND memory_slug = new.slug), 0)
    WHERE memory_store = old.store AND memory_slug = old.slug
        AND (old.store IS NOT new.store OR old.slug IS NOT new.slug);
    {_copy("old", "new.store", "new.slug", "updated")}
END;
CREATE TRIGGER thatch_cli_history_ad AFTER DELETE ON entries BEGIN
    {_copy("old", "old.store", "old.slug", "deleted")}
END;
CREATE TRIGGER thatch_cli_history_keep AFTER INSERT ON {_TABLE} BEGIN
    DELETE FROM {_TABLE} WHERE memory_store = new.memory_store AND memory_slug = new.memory_slug
        AND id NOT IN (SELECT id FROM {_TABLE}
                       WHERE memory_store = new.memory_store AND memory_slug = new.memory_slug
                       ORDER BY version DESC LIMIT coalesce(
            (SELECT CAST(value AS INTEGER) FROM thatch_cli_meta WHERE key = 'history_keep'), {DEFAULT_KEEP}));
END;
"""

VERSION_COLUMNS = ("version", "event", "recorded_at") + COLUMNS


def keep_setting(conn) -> int | None:
    row = conn.execute("SELECT value FROM thatch_cli_meta WHERE key = 'history_keep'").fetchone()
    return int(row[0]) if row else None


def set_keep(conn, keep: int) -> None:
    """Record how many versions per memory to keep (inside the caller's
    write transaction), trimming what is over it now."""
    conn.execute("INSERT OR REPLACE INTO thatch_cli_meta (key, value) VALUES ('history_keep', ?)", (str(keep),))
    conn.execute(f"""DELETE FROM {_TABLE} WHERE id IN (
        SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY memory_store, memory_slug
                                                      ORDER BY version DESC) AS newer
                        FROM {_TABLE}) WHERE newer > ?)""", (keep,))


def versions(conn, store: str, slug: str, *, with_vectors: bool = False) -> list[dict[str, Any]]:
    """Every kept version of the memory keyed (store, slug), oldest first."""
    names = [c for c in VERSION_COLUMNS if with_vectors or c != "embedding"]
    rows = conn.execute(
        f"SELECT {', '.join(names)} FROM {_TABLE} WHERE memory_store = ? AND memory_slug = ? ORDER BY version",
        (store, slug))
    return [dict(zip(names, row)) for row in rows]


def has_history(conn, store: str, slug: str) -> bool:
    return conn.execute(f"SELECT 1 FROM {_TABLE} WHERE memory_store = ? AND memory_slug = ? LIMIT 1",
                        (store, slug)).fetchone() is not None


def export_rows(conn, stores: Sequence[str] | None) -> list[dict[str, Any]]:
    """Every kept version (of `stores`, or all), as stored, for export."""
    names = ["memory_store", "memory_slug", *VERSION_COLUMNS]
    where, args = "", []
    if stores is not None:
        where, args = f"WHERE memory_store IN ({','.join('?' * len(stores))})", list(stores)
    rows = conn.execute(f"SELECT {', '.join(names)} FROM {_TABLE} {where} ORDER BY memory_store, memory_slug, version",
                        args)
    return [dict(zip(names, row)) for row in rows]


def import_row(conn, values: Mapping[str, Any]) -> bool:
    """Add one exported version (inside the caller's transaction). A version
    the memory already has (same number and text) is not added twice; one
    whose number is taken by another is added as the memory's newest.
    Returns whether it was added."""
    names = ["memory_store", "memory_slug", *VERSION_COLUMNS]
    key = (values["memory_store"], values["memory_slug"])
    taken = conn.execute(f"SELECT content, updated_at FROM {_TABLE} WHERE memory_store = ? AND memory_slug = ?"
                         " AND version = ?", (*key, values["version"])).fetchone()
    row = dict(values)
    if taken is not None:
        if taken == (values["content"], values["updated_at"]):
            return False
        row["version"] = conn.execute(f"SELECT max(version) FROM {_TABLE} WHERE memory_store = ?"
                                      " AND memory_slug = ?", key).fetchone()[0] + 1
    conn.execute(f"INSERT INTO {_TABLE} ({', '.join(names)}) VALUES ({','.join('?' * len(names))})",
                 [row.get(n) for n in names])
    return True


def date_newest(conn, store: str, slug: str, event: str, now: str) -> None:
    """Give the version a change just kept the program's own time (the
    triggers can only read the system clock): a forget or a flag change is
    dated by the same clock as an edit, which sync orders changes by."""
    conn.execute(f"UPDATE {_TABLE} SET recorded_at = ? WHERE id = (SELECT max(id) FROM {_TABLE}"
                 " WHERE memory_store = ? AND memory_slug = ?) AND event = ?", (now, store, slug, event))


def changed_at(conn, store: str, slug: str, content: str, label: str) -> str | None:
    """When the memory's last change that left its label and text alone (a
    flag, its branch, its confidence) was made: the time its newest kept
    version was recorded, when that version has the same label and text."""
    row = conn.execute(f"SELECT recorded_at, content, label FROM {_TABLE} WHERE memory_store = ? AND memory_slug = ?"
                       " AND event != 'conflict' ORDER BY version DESC LIMIT 1", (store, slug)).fetchone()
    return row[0] if row and row[1] == content and row[2] == label else None


def moved_from(conn, store: str, slug: str) -> tuple[str, str] | None:
    """(slug it has now, when it left `slug`) of the memory that was last
    renamed away from `slug` in `store`, when that is `slug`'s latest
    event (a forget of the slug since wins)."""
    row = conn.execute(f"SELECT memory_slug, version, event FROM {_TABLE} WHERE memory_store = ? AND slug = ?"
                       " AND ((memory_slug != slug AND event != 'conflict') OR (event = 'deleted' AND memory_slug = ?))"
                       " ORDER BY id DESC LIMIT 1", (store, slug, slug)).fetchone()
    if row is None or row[2] == "deleted":
        return None
    later = conn.execute(f"SELECT updated_at FROM {_TABLE} WHERE memory_store = ? AND memory_slug = ? AND version > ?"
                         " ORDER BY version LIMIT 1", (store, row[0], row[1])).fetchone()
    if later is None:
        later = conn.execute("SELECT updated_at FROM entries WHERE store = ? AND slug = ?", (store, row[0])).fetchone()
    return (row[0], later[0]) if later else None
