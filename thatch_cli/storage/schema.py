"""The database's schema and its migrations (opening.py opens files and
runs them).

The tables the original thatch defines are created exactly as it does, so a
database either tool created opens in the other. What thatch_cli adds (the
FTS5 index, its triggers, a meta table) is additive and versioned; tables we
do not know about are never touched.
"""

from __future__ import annotations

import sqlite3

from ..memory import fields

SCHEMA_VERSION = 7

# `entries` as the original creates it: its columns (memory/fields.py), in its order.
_ENTRIES = ",\n".join([f"    {f.column} {f.sql}" for f in fields.ORIGINAL] + ["    PRIMARY KEY (slug, store)"])
_BASE_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS stores (
    name TEXT PRIMARY KEY
);
INSERT OR IGNORE INTO stores (name) VALUES ('global');
CREATE TABLE IF NOT EXISTS entries (
{_ENTRIES}
);
CREATE TABLE IF NOT EXISTS dedup_pairs (
    store TEXT NOT NULL,
    slug_a TEXT NOT NULL,
    slug_b TEXT NOT NULL,
    status TEXT NOT NULL,
    checked_at TEXT NOT NULL,
    PRIMARY KEY (store, slug_a, slug_b)
);
CREATE TABLE IF NOT EXISTS thatch_cli_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

# Every field's column: an older file (of the original, which added columns
# over its releases, or of an earlier thatch) gets the ones it lacks in place.
_ENTRY_COLUMNS = {f.column: f.sql for f in fields.ENTRIES}

# Columns thatch added to its own table of branch deletions: the git process
# that saw one (schema 4), so a branch deleted again soon after is recorded again.
_DELETION_COLUMNS = {"git_pid": "INTEGER"}

# The keyword index follows every write to entries, whoever makes it. An
# insert first drops any index row still mapped to its key: `INSERT OR
# REPLACE` deletes the row it replaces without firing delete triggers
# (recursive_triggers is off by default), which used to leave the old text
# findable. An update likewise drops what is mapped to the new key, for
# `UPDATE OR REPLACE` onto another memory's key.
_FTS_TRIGGERS = """
CREATE TRIGGER entries_fts_ai AFTER INSERT ON entries BEGIN
    DELETE FROM entries_fts WHERE rowid IN
        (SELECT fts_rowid FROM thatch_cli_fts_rows WHERE store = new.store AND slug = new.slug);
    INSERT INTO entries_fts (slug, store, label, content)
    VALUES (new.slug, new.store, new.label, new.content);
    INSERT OR REPLACE INTO thatch_cli_fts_rows (store, slug, fts_rowid)
    VALUES (new.store, new.slug, last_insert_rowid());
END;
CREATE TRIGGER entries_fts_ad AFTER DELETE ON entries BEGIN
    DELETE FROM entries_fts WHERE rowid IN
        (SELECT fts_rowid FROM thatch_cli_fts_rows WHERE store = old.store AND slug = old.slug);
    DELETE FROM thatch_cli_fts_rows WHERE store = old.store AND slug = old.slug;
END;
CREATE TRIGGER entries_fts_au AFTER UPDATE OF slug, store, label, content ON entries BEGIN
    DELETE FROM entries_fts WHERE rowid IN (SELECT fts_rowid FROM thatch_cli_fts_rows
        WHERE (store = old.store AND slug = old.slug) OR (store = new.store AND slug = new.slug));
    DELETE FROM thatch_cli_fts_rows
        WHERE (store = old.store AND slug = old.slug) OR (store = new.store AND slug = new.slug);
    INSERT INTO entries_fts (slug, store, label, content)
    VALUES (new.slug, new.store, new.label, new.content);
    INSERT OR REPLACE INTO thatch_cli_fts_rows (store, slug, fts_rowid)
    VALUES (new.store, new.slug, last_insert_rowid());
END;
"""

# The insert trigger as sqlite_master keeps it (storage/bulkindex.py applies
# its effect itself only where the file has exactly this one).
FTS_INSERT_TRIGGER = _FTS_TRIGGERS.strip().split("END;")[0] + "END"

_DROP_FTS_TRIGGERS = """
DROP TRIGGER IF EXISTS entries_fts_ai;
DROP TRIGGER IF EXISTS entries_fts_ad;
DROP TRIGGER IF EXISTS entries_fts_au;
"""
# Fill the index (and its row map) from entries afresh.
_REINDEX = """
DELETE FROM entries_fts;
DELETE FROM thatch_cli_fts_rows;
INSERT INTO entries_fts (slug, store, label, content) SELECT slug, store, label, content FROM entries;
INSERT INTO thatch_cli_fts_rows (store, slug, fts_rowid) SELECT store, slug, rowid FROM entries_fts;
"""

# A contentful FTS table keyed by (slug, store), not an external-content one:
# entries has no INTEGER PRIMARY KEY, so its rowids may change on VACUUM.
# Triggers keep it in step with writes from either tool. The per-store
# version counter lets a warm process cache vectors and notice any change that
# affects ranking (telemetry stamps deliberately do not bump it).
def _migrations() -> dict[int, str]:
    """The migrations, built only when a file needs one: they name the
    history's and sync's SQL, which a command on a current file never
    imports."""
    from . import anchors, history, sync

    return {
    1: """
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
    slug UNINDEXED, store UNINDEXED, label, content,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS entries_fts_ai AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (slug, store, label, content)
    VALUES (new.slug, new.store, new.label, new.content);
END;
CREATE TRIGGER IF NOT EXISTS entries_fts_ad AFTER DELETE ON entries BEGIN
    DELETE FROM entries_fts WHERE slug = old.slug AND store = old.store;
END;
CREATE TRIGGER IF NOT EXISTS entries_fts_au AFTER UPDATE OF slug, store, label, content ON entries BEGIN
    DELETE FROM entries_fts WHERE slug = old.slug AND store = old.store;
    INSERT INTO entries_fts (slug, store, label, content)
    VALUES (new.slug, new.store, new.label, new.content);
END;
DELETE FROM entries_fts;
INSERT INTO entries_fts (slug, store, label, content) SELECT slug, store, label, content FROM entries;
CREATE INDEX IF NOT EXISTS entries_store_branch ON entries (store, branch);
CREATE TABLE IF NOT EXISTS thatch_cli_store_versions (
    store TEXT PRIMARY KEY,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE TRIGGER IF NOT EXISTS entries_version_ai AFTER INSERT ON entries BEGIN
    INSERT INTO thatch_cli_store_versions (store, version) VALUES (new.store, 1)
    ON CONFLICT (store) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER IF NOT EXISTS entries_version_ad AFTER DELETE ON entries BEGIN
    INSERT INTO thatch_cli_store_versions (store, version) VALUES (old.store, 1)
    ON CONFLICT (store) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER IF NOT EXISTS entries_version_au
AFTER UPDATE OF slug, store, embedding, model, branch, archived ON entries BEGIN
    INSERT INTO thatch_cli_store_versions (store, version) VALUES (old.store, 1)
    ON CONFLICT (store) DO UPDATE SET version = version + 1;
    INSERT INTO thatch_cli_store_versions (store, version) VALUES (new.store, 1)
    ON CONFLICT (store) DO UPDATE SET version = version + 1;
END;
""",
    # Branch deletions seen by the reference-transaction hook, one row per
    # (store, branch); `memories` is how many live memories were scoped to the
    # branch when it went, so hygiene can tell "orphaned by a deletion" apart.
    2: """
CREATE TABLE IF NOT EXISTS thatch_cli_deleted_branches (
    store TEXT NOT NULL,
    branch TEXT NOT NULL,
    deleted_at TEXT NOT NULL,
    memories INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (store, branch)
);
""",
    # Which FTS row holds each memory. The FTS table can only find a memory
    # by its (UNINDEXED) store and slug with a full scan, so every delete or
    # overwrite cost ~35 ms at 100k memories; through this map it is one
    # rowid lookup. Schema 4 (which every upgrade runs too) rebuilds the
    # index to fill the map and creates the triggers that keep both in step.
    3: """
CREATE TABLE IF NOT EXISTS thatch_cli_fts_rows (
    store TEXT NOT NULL,
    slug TEXT NOT NULL,
    fts_rowid INTEGER NOT NULL,
    PRIMARY KEY (store, slug)
);
""" + _DROP_FTS_TRIGGERS,
    # History (storage/history.py), an exact keyword index whatever SQL
    # another program runs, and which git process recorded a branch deletion.
    4: history.MIGRATION + _DROP_FTS_TRIGGERS + _FTS_TRIGGERS + _REINDEX + """
INSERT OR REPLACE INTO thatch_cli_meta (key, value)
    SELECT 'model_paths', 'pending' WHERE EXISTS (SELECT 1 FROM entries WHERE model LIKE '/%');
""",
    # thatch sync (storage/sync.py): each memory's marks (private, author,
    # unreviewed) and each store's sync state, kept beside entries.
    5: sync.MIGRATION,
    # Anchors (storage/anchors.py): the code each memory describes.
    6: anchors.MIGRATION,
    # Provenance recorded by this machine (storage/sync.py): the marks gain
    # `incoming`, and what already came through sync is marked with it.
    7: sync.PROVENANCE,
}


class UnreadableVersion(Exception):
    """thatch_cli_meta holds a schema version that is not a whole number."""

    def __init__(self, value: object) -> None:
        shown = repr(value)
        super().__init__(shown if len(shown) <= 40 else shown[:37] + "...")


def schema_version(conn: sqlite3.Connection) -> int:
    """The file's thatch schema version: 0 for the original's format (no
    meta table, or no version in it). UnreadableVersion for anything but a
    whole number: guessing would migrate, or misread, a file we do not
    understand."""
    try:
        row = conn.execute("SELECT value FROM thatch_cli_meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return 0
        raise
    if row is None:
        return 0
    value = row[0]
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**6:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 7:
        return int(value)
    raise UnreadableVersion(value)


def holds_data(conn: sqlite3.Connection) -> bool:
    """Whether the file already holds tables (not a database we just created)."""
    return conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None


def migrate(conn: sqlite3.Connection, current: int, version: int = SCHEMA_VERSION) -> None:
    """Bring a file at schema `current` to `version`, and give it the
    columns of fields (memory/fields.py) it lacks, inside the caller's write
    transaction."""
    for statement in split(_BASE_SCHEMA):
        conn.execute(statement)
    _add_missing_columns(conn, "entries", _ENTRY_COLUMNS)
    migrations = _migrations()
    for step in range(current + 1, version + 1):
        if step == 7:  # an older file's marks lack the column the new triggers name
            from . import sync

            _add_missing_columns(conn, sync.MARKS, sync.COLUMNS)
        for statement in split(migrations[step]):
            conn.execute(statement)
    if version >= 2:
        _add_missing_columns(conn, "thatch_cli_deleted_branches", _DELETION_COLUMNS)
    if version >= 4:
        refresh_history(conn)
    conn.execute("INSERT OR REPLACE INTO thatch_cli_meta (key, value) VALUES ('schema_version', ?)", (str(version),))


def refresh_history(conn: sqlite3.Connection) -> None:
    """The history table's columns and triggers, and the store version's
    update trigger, as the fields now declare them (a field added since the
    file was last opened gains its column, and the triggers that copy or
    watch it), inside the caller's write transaction."""
    from . import history

    _add_missing_columns(conn, "thatch_cli_history", history.SNAPSHOT)
    for statement in split(history.TRIGGERS):
        conn.execute(statement)
    conn.execute("DROP TRIGGER IF EXISTS entries_version_au")
    conn.execute(VERSION_TRIGGER)


# What changes what a warm process caches of a store (daemon/cache.py): a
# vector, the key, and every column its filters read (memory/filter.py).
_WATCHED = ("slug", "store", "embedding", "model", "branch", "archived", *(f.column for f in fields.FILTERED))
VERSION_TRIGGER = f"""CREATE TRIGGER entries_version_au
AFTER UPDATE OF {", ".join(_WATCHED)} ON entries BEGIN
    INSERT INTO thatch_cli_store_versions (store, version) VALUES (old.store, 1)
    ON CONFLICT (store) DO UPDATE SET version = version + 1;
    INSERT INTO thatch_cli_store_versions (store, version) VALUES (new.store, 1)
    ON CONFLICT (store) DO UPDATE SET version = version + 1;
END"""


def missing_columns(conn: sqlite3.Connection) -> bool:
    """Whether `entries` lacks a field's column (a field added since the
    file was last upgraded), or the store version's trigger watches other
    columns than the fields now declare: adding a field needs no schema
    version, since no reader depends on it being there (storage reads rows
    by column name)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(entries)")}
    # No table at all is damage (a file at our schema always has one), not ours to repair.
    if not have:
        return False
    trigger = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'entries_version_au'"
                           ).fetchone()
    return not have.issuperset(_ENTRY_COLUMNS) or (trigger is not None and trigger[0] != VERSION_TRIGGER)


def _add_missing_columns(conn: sqlite3.Connection, table: str, columns: dict[str, str]) -> None:
    """SQLite has no ADD COLUMN IF NOT EXISTS: add the ones `table` lacks."""
    have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    for column, decl in columns.items():
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")


def split(script: str) -> list[str]:
    """Split a script into statements, keeping trigger bodies whole."""
    statements, buffer = [], ""
    for line in script.strip().splitlines():
        buffer += line + "\n"
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return statements
