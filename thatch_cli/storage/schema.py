"""Opening the SQLite file and keeping its schema current.

The tables the original thatch defines are created exactly as it does, so a
database either tool created opens in the other. What thatch_cli adds (the
FTS5 index, its triggers, a meta table) is additive and versioned; tables we
do not know about are never touched.
"""

from __future__ import annotations

import os
import sqlite3

from ..errors import DatabaseError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing

SCHEMA_VERSION = 4
# How long a command waits for another process's write lock.
LOCK_TIMEOUT_S = 10.0

_BASE_SCHEMA = """
CREATE TABLE IF NOT EXISTS stores (
    name TEXT PRIMARY KEY
);
INSERT OR IGNORE INTO stores (name) VALUES ('global');
CREATE TABLE IF NOT EXISTS entries (
    slug TEXT NOT NULL,
    store TEXT NOT NULL REFERENCES stores(name),
    label TEXT NOT NULL,
    content TEXT NOT NULL,
    embedding BLOB,
    model TEXT,
    branch TEXT,
    confidence INTEGER,
    archived INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    recall_count INTEGER NOT NULL DEFAULT 0,
    last_recalled_at TEXT,
    PRIMARY KEY (slug, store)
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

# Columns later releases of the original added; an older file gets them in place.
_ENTRY_COLUMNS = {
    "embedding": "BLOB",
    "model": "TEXT",
    "branch": "TEXT",
    "confidence": "INTEGER",
    "archived": "INTEGER NOT NULL DEFAULT 0",
    "recall_count": "INTEGER NOT NULL DEFAULT 0",
    "last_recalled_at": "TEXT",
}

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
    """The migrations, built only when a file needs one (they name history's
    SQL, which a command on a current file never imports)."""
    from . import history

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
    }


def _create_private_file(path: str | os.PathLike, create_parent: bool) -> None:
    from ..files import create_exclusive

    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        if not create_parent:
            raise DatabaseError(f"cannot create database {path}: directory {parent} does not exist"
                                " (create it, or point THATCH_DB elsewhere)")
        os.makedirs(parent, mode=0o700, exist_ok=True)
    try:
        create_exclusive(path)
    except FileExistsError:
        pass


def _schema_version(conn: sqlite3.Connection) -> int:
    try:
        row = conn.execute("SELECT value FROM thatch_cli_meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:
        return 0
    return int(row[0]) if row else 0


def _holds_data(conn: sqlite3.Connection) -> bool:
    """Whether the file already holds tables (not a database we just created)."""
    return conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None


def _upgrade(conn: sqlite3.Connection, path: str | os.PathLike) -> None:
    """Bring the schema up to date in one transaction. A file that already
    holds data (the original's, or an older thatch's) is first copied to a
    verified backup beside it; if that fails nothing is changed."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have upgraded while we waited for the lock.
        current = _schema_version(conn)
        if current >= SCHEMA_VERSION:
            conn.execute("COMMIT")
            return
        if _holds_data(conn):
            # The backup reads through its own connection while ours holds
            # the write lock, so it is exactly the state being migrated.
            from pathlib import Path

            from . import backup

            try:
                backup.before_upgrade(Path(path), SCHEMA_VERSION)
            except backup.BackupFailed as exc:
                raise DatabaseError(f"not upgrading {path} (schema {current} to {SCHEMA_VERSION}):"
                                    f" {exc}; nothing was changed") from None
        for statement in _split(_BASE_SCHEMA):
            conn.execute(statement)
        _add_missing_columns(conn, "entries", _ENTRY_COLUMNS)
        migrations = _migrations()
        for version in range(current + 1, SCHEMA_VERSION + 1):
            for statement in _split(migrations[version]):
                conn.execute(statement)
        _add_missing_columns(conn, "thatch_cli_deleted_branches", _DELETION_COLUMNS)
        conn.execute(
            "INSERT OR REPLACE INTO thatch_cli_meta (key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _add_missing_columns(conn: sqlite3.Connection, table: str, columns: dict[str, str]) -> None:
    """SQLite has no ADD COLUMN IF NOT EXISTS: add the ones `table` lacks."""
    have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    for column, decl in columns.items():
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")


def _split(script: str) -> list[str]:
    """Split a script into statements, keeping trigger bodies whole."""
    statements, buffer = [], ""
    for line in script.strip().splitlines():
        buffer += line + "\n"
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return statements


def _open(path: str | os.PathLike, timeout: float) -> sqlite3.Connection:
    # Autocommit mode: every write path opens its own explicit transaction.
    conn = sqlite3.connect(path, isolation_level=None, timeout=timeout, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    return conn


def _writable(path: str | os.PathLike) -> bool:
    """Whether this process may write the file and create its journal files
    beside it (False on a read-only file or mount)."""
    return os.access(path, os.W_OK) and os.access(os.path.dirname(os.path.abspath(path)), os.W_OK | os.X_OK)


def connect(path: str | os.PathLike, *, timeout: float | None = None, create_parent: bool = True) -> sqlite3.Connection:
    """open_database's connection."""
    return open_database(path, timeout=timeout, create_parent=create_parent)[0]


def open_database(path: str | os.PathLike, *, timeout: float | None = None,
                  create_parent: bool = True) -> tuple[sqlite3.Connection, bool]:
    """Open the database, bringing its schema up to date; returns (connection,
    read_only). A missing file is created (its directory too only with
    `create_parent`: the default location). A file this process cannot write
    (read-only file or mount) opens read-only, as it is: reads work, writes
    fail with a clear error."""
    timeout = LOCK_TIMEOUT_S if timeout is None else timeout
    try:
        if not os.path.exists(path):
            _create_private_file(path, create_parent)
        if not _writable(path):
            return _open_read_only(path, timeout), True
        conn = _open(path, timeout)
        try:
            version = _schema_version(conn)
            _refuse_newer(path, version)
            if version < SCHEMA_VERSION:
                _upgrade(conn, path)
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            conn.close()
            raise
        return conn, False
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"cannot open database {path}: {exc}") from exc
    except OSError as exc:
        raise DatabaseError(f"cannot open database {path}: {exc.strerror or exc}") from exc


def _open_read_only(path: str | os.PathLike, timeout: float) -> sqlite3.Connection:
    from pathlib import Path

    from .hooks import open_readonly

    conn = open_readonly(Path(path), timeout, check_same_thread=False)
    if conn is None:
        raise DatabaseError(f"cannot open database {path} read-only (a write-ahead log beside it"
                            " needs a writable directory to be read)")
    conn.isolation_level = None
    _refuse_newer(path, _schema_version(conn))
    return conn


def connect_existing(path: str | os.PathLike, *, timeout: float = 10.0) -> sqlite3.Connection:
    """Open a database that is already a thatch database at this schema,
    creating and migrating nothing (the daemon opens files named by its
    clients, and must never turn an arbitrary file into a thatch database)."""
    try:
        if not os.path.isfile(path):
            raise DatabaseError(f"no thatch database at {path}")
        conn = _open(path, timeout) if _writable(path) else _open_read_only(path, timeout)
        version = _schema_version(conn)
        if version != SCHEMA_VERSION:
            conn.close()
            raise DatabaseError(f"{path} is not a thatch database of schema {SCHEMA_VERSION} (found {version})")
        return conn
    except sqlite3.DatabaseError as exc:
        raise DatabaseError(f"cannot open database {path}: {exc}") from exc
    except OSError as exc:
        raise DatabaseError(f"cannot open database {path}: {exc.strerror or exc}") from exc


def _refuse_newer(path: str | os.PathLike, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise DatabaseError(f"{path} was written by a newer thatch (schema {version}); upgrade thatch to use it")


def file_version(path: str | os.PathLike) -> int:
    """The thatch schema version of a database file (0: the original's or an
    older format), read without changing it."""
    from pathlib import Path

    from .hooks import connect_readonly

    conn = connect_readonly(Path(path))
    try:
        return _schema_version(conn)
    finally:
        conn.close()

