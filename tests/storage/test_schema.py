"""An existing database of the original thatch opens in place and loses nothing."""

import sqlite3
import stat

import pytest

from thatch_cli.storage import schema as dbmod
from thatch_cli.storage.memories import MemoryDB
from thatch_cli.support.clock import format_ts, parse_ts
from thatch_cli.support.errors import DatabaseError

ORIGINAL_SCHEMA = """
CREATE TABLE stores (name TEXT PRIMARY KEY);
INSERT INTO stores (name) VALUES ('global');
CREATE TABLE entries (
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
CREATE TABLE dedup_pairs (
  store TEXT NOT NULL, slug_a TEXT NOT NULL, slug_b TEXT NOT NULL,
  status TEXT NOT NULL, checked_at TEXT NOT NULL,
  PRIMARY KEY (store, slug_a, slug_b)
);
CREATE TABLE predictions (id INTEGER PRIMARY KEY, store TEXT, text TEXT, embedding BLOB);
CREATE TABLE chat (id INTEGER PRIMARY KEY, body TEXT);
"""

# An early release without branch scoping or recall telemetry.
OLDER_SCHEMA = """
CREATE TABLE stores (name TEXT PRIMARY KEY);
INSERT INTO stores (name) VALUES ('global');
CREATE TABLE entries (
  slug TEXT NOT NULL, store TEXT NOT NULL REFERENCES stores(name), label TEXT NOT NULL,
  content TEXT NOT NULL, embedding BLOB, model TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  PRIMARY KEY (slug, store)
);
"""

VECTOR = bytes(range(16)) * 96  # 1536 bytes = 384 float32


def lexical_hits(db, stores, query, *, branch, include_archived, limit):
    """The keyword ranking alone (ranking/lexical.py)."""
    from thatch_cli.memory.filter import Filter
    from thatch_cli.ranking import lexical

    return lexical.rank(db, Filter(stores, branch=branch, archived=include_archived), query, limit=limit,
                        weigh=False)[0]


def _seed(path, schema):
    conn = sqlite3.connect(path)
    conn.executescript(schema)
    conn.execute("INSERT INTO stores (name) VALUES ('acme/widget')")
    return conn


# The columns of entries the original reads and writes, in its order.
ORIGINAL_COLUMNS = ["slug", "store", "label", "content", "embedding", "model", "branch", "confidence", "archived",
                    "created_at", "updated_at", "recall_count", "last_recalled_at"]


def _dump(conn, table):
    """The rows of a table as the original sees them (of entries, its own columns)."""
    columns = ", ".join(ORIGINAL_COLUMNS) if table == "entries" else "*"
    return sorted(conn.execute(f"SELECT {columns} FROM {table}").fetchall(), key=repr)


def test_original_database_opens_in_place_and_keeps_every_row(tmp_path):
    path = tmp_path / "thatch.db"
    conn = _seed(path, ORIGINAL_SCHEMA)
    conn.executemany(
        "INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            ("build-steps", "acme/widget", "Build Steps!", "# Build Steps!\n\nmake", VECTOR,
             "Xenova/bge-small-en-v1.5", None, 8, 0, "2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05.678Z", 3,
             "2026-02-01T00:00:00Z"),
            ("wip", "acme/widget", "wip", "# wip\n\nhalf done", None, None, "feat/login", None, 1,
             "2026-01-02T03:04:05Z", "2026-01-03T00:00:00Z", 0, None),
        ],
    )
    conn.execute("INSERT INTO dedup_pairs VALUES ('acme/widget', 'a', 'b', 'distinct', '2026-01-01T00:00:00.000Z')")
    conn.execute("INSERT INTO predictions (store, text, embedding) VALUES ('acme/widget', 'p', x'0011')")
    conn.execute("INSERT INTO chat (body) VALUES ('hello')")
    conn.commit()
    before = {t: _dump(conn, t) for t in ("stores", "entries", "dedup_pairs", "predictions", "chat")}
    conn.close()

    store = MemoryDB.open(path)
    memories = {m.slug: m for m in store.list(["acme/widget"], archived=None)}
    assert memories["build-steps"].label == "Build Steps!"
    assert memories["build-steps"].recall_count == 3
    assert memories["wip"].branch == "feat/login" and memories["wip"].archived
    # The FTS index was built from existing rows.
    hits = lexical_hits(store, ["acme/widget"], "make", branch=None, include_archived=True, limit=5)
    assert [h.slug for h in hits] == ["build-steps"]
    store.close()

    # Reopen with plain sqlite3, as the original would: nothing lost or changed.
    conn = sqlite3.connect(path)
    after = {t: _dump(conn, t) for t in before}
    assert after == before
    # The original can still write with its own SQL (our triggers only add to our tables).
    conn.execute(
        "INSERT INTO entries (slug, store, label, content, created_at, updated_at) VALUES (?,?,?,?,?,?)",
        ("new", "global", "new", "# new\n\nfrom the original", "2026-03-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"),
    )
    conn.commit()
    conn.close()
    store = MemoryDB.open(path)
    assert [h.slug for h in lexical_hits(store, ["global"], "original", branch=None, include_archived=False, limit=5)] == ["new"]


def test_older_schema_is_upgraded_in_place(tmp_path):
    path = tmp_path / "old.db"
    conn = _seed(path, OLDER_SCHEMA)
    conn.execute(
        "INSERT INTO entries VALUES ('a', 'acme/widget', 'A', '# A\n\nbody', ?, 'm', '2026-01-01T00:00:00Z',"
        " '2026-01-01T00:00:00Z')",
        (VECTOR,),
    )
    conn.commit()
    conn.close()
    store = MemoryDB.open(path)
    memory = store.get("acme/widget", "a", with_vector=True)
    assert memory.embedding == VECTOR
    assert memory.recall_count == 0 and memory.archived is False and memory.branch is None
    columns = {row[1] for row in store.conn.execute("PRAGMA table_info(entries)")}
    assert {"branch", "confidence", "archived", "recall_count", "last_recalled_at"} <= columns
    version = store.conn.execute("SELECT value FROM thatch_cli_meta WHERE key='schema_version'").fetchone()[0]
    assert int(version) == dbmod.SCHEMA_VERSION


def test_new_database_is_private_and_wal(tmp_path):
    path = tmp_path / "sub" / "dir" / "thatch.db"
    store = MemoryDB.open(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store.store_names() == ["global"]


def test_newer_schema_is_refused_not_damaged(tmp_path):
    path = tmp_path / "future.db"
    MemoryDB.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE thatch_cli_meta SET value = '999' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(DatabaseError, match="newer thatch"):
        MemoryDB.open(path)


def test_not_a_database(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(DatabaseError):
        MemoryDB.open(path)
    assert path.read_bytes() == b"this is not sqlite" * 100


@pytest.mark.parametrize(
    "text",
    ["2026-11-30T12:00:00.123Z", "2026-11-30T12:00:00Z", "2026-11-30T12:00:00", "2026-11-30 12:00:00",
     "2026-11-30T13:00:00+01:00"],
)
def test_timestamps_read_with_and_without_milliseconds(text):
    moment = parse_ts(text)
    assert (moment.hour, moment.minute, moment.tzinfo is not None) == (12, 0, True)


def test_timestamps_written_like_the_original():
    assert format_ts(parse_ts("2026-11-30T12:00:00.123Z")) == "2026-11-30T12:00:00.123Z"
    assert format_ts(parse_ts("2026-11-30T12:00:00Z")) == "2026-11-30T12:00:00.000Z"
    assert parse_ts("garbage") is None and parse_ts(None) is None


def _fts_consistent(conn) -> None:
    """The index holds exactly one row per memory, and the map points at it."""
    entries = sorted(conn.execute("SELECT store, slug, label, content FROM entries").fetchall())
    indexed = sorted(conn.execute("SELECT store, slug, label, content FROM entries_fts").fetchall())
    assert indexed == entries
    mapped = sorted(conn.execute(
        "SELECT m.store, m.slug, f.label, f.content FROM thatch_cli_fts_rows m"
        " JOIN entries_fts f ON f.rowid = m.fts_rowid").fetchall())
    assert mapped == entries


def test_writes_from_any_tool_keep_the_index_exact(tmp_path):
    path = tmp_path / "thatch.db"
    store = MemoryDB.open(path)
    store.ensure_store("s")
    store.close()
    conn = sqlite3.connect(path)  # the original's own SQL, through our triggers
    rows = [(f"n{i}", "s", f"note {i}", f"# note {i}\n\nbody {i}", "2026-03-01T00:00:00.000Z",
             "2026-03-01T00:00:00.000Z") for i in range(20)]
    conn.executemany("INSERT INTO entries (slug, store, label, content, created_at, updated_at)"
                     " VALUES (?,?,?,?,?,?)", rows)
    conn.execute("DELETE FROM entries WHERE slug IN ('n3', 'n7')")
    conn.execute("UPDATE entries SET content = '# note 5\n\nrewritten zebra' WHERE slug = 'n5'")
    conn.execute("UPDATE entries SET slug = 'renamed', label = 'renamed' WHERE slug = 'n9'")
    conn.execute("UPDATE entries SET archived = 1 WHERE slug = 'n1'")  # not an indexed column
    # INSERT OR REPLACE deletes the old row without firing delete triggers.
    conn.execute("INSERT OR REPLACE INTO entries (slug, store, label, content, created_at, updated_at)"
                 " VALUES ('n6', 's', 'note 6', '# note 6\n\nrewritten zebra', 't', 't')")
    conn.execute("INSERT OR REPLACE INTO entries (slug, store, label, content, created_at, updated_at)"
                 " VALUES ('n6', 's', 'note 6', '# note 6\n\nreplaced by walrus', 't', 't')")
    conn.commit()
    _fts_consistent(conn)
    conn.close()
    store = MemoryDB.open(path)
    assert [h.slug for h in lexical_hits(store, ["s"], "zebra", branch=None, include_archived=False, limit=5)] == ["n5"]
    assert lexical_hits(store, ["s"], "body 3", branch=None, include_archived=False, limit=50)[0].slug != "n3"
    # The replaced text is gone from the index: its word finds only n5 now.
    assert [h.slug for h in lexical_hits(store, ["s"], "walrus", branch=None, include_archived=False, limit=5)] \
        == ["n6"]
    _fts_consistent(store.conn)


def test_schema_2_index_is_rebuilt_with_its_map(tmp_path):
    """A database last written by schema 2 (index triggers without the map)
    gets the map filled and the new triggers; search results stay the same."""
    path = tmp_path / "thatch.db"
    store = MemoryDB.open(path)
    conn = store.conn
    conn.execute("DROP TABLE thatch_cli_fts_rows")
    for name in ("entries_fts_ai", "entries_fts_ad", "entries_fts_au"):
        conn.execute(f"DROP TRIGGER {name}")
    for statement in dbmod.split(dbmod._migrations()[1]):
        if "entries_fts_a" in statement and statement.startswith("CREATE TRIGGER"):
            conn.execute(statement)
    conn.execute("UPDATE thatch_cli_meta SET value = '2' WHERE key = 'schema_version'")
    store.ensure_store("s")
    conn.executemany("INSERT INTO entries (slug, store, label, content, created_at, updated_at) VALUES (?,?,?,?,?,?)",
                     [("a", "s", "a", "# a\n\nalpha words", "t", "t"), ("b", "s", "b", "# b\n\nbeta words", "t", "t")])
    store.close()
    store = MemoryDB.open(path)
    assert int(store.conn.execute("SELECT value FROM thatch_cli_meta WHERE key='schema_version'").fetchone()[0]) \
        == dbmod.SCHEMA_VERSION
    _fts_consistent(store.conn)
    store.conn.execute("DELETE FROM entries WHERE slug = 'a'")
    _fts_consistent(store.conn)
    assert [h.slug for h in lexical_hits(store, ["s"], "words", branch=None, include_archived=False, limit=5)] == ["b"]
