"""The history table is kept by triggers, so every writer's changes keep
the version they replace: thatch's own commands, the original thatch, and
plain SQL from another connection (INSERT OR REPLACE and upserts too).
Telemetry and re-embedding are not versions; retention is bounded."""

from __future__ import annotations

import sqlite3

import pytest

from thatch_cli.storage import history
from thatch_cli.storage.maintenance import index_problems
from thatch_cli.storage.memories import MemoryDB

INSERT = "INSERT INTO entries (slug, store, label, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)"


@pytest.fixture
def paths(tmp_path):
    path = tmp_path / "t.db"
    db = MemoryDB.open(path)
    db.ensure_store("s")
    db.conn.execute(INSERT, ("a", "s", "a", "# a\n\none", "t0", "t1"))
    db.close()
    return path


def other_program(path) -> sqlite3.Connection:
    """A plain connection, as the original thatch or a script would open it."""
    return sqlite3.connect(path, isolation_level=None)


def kept(path, slug="a", store="s"):
    conn = sqlite3.connect(path)
    try:
        return [(v["version"], v["event"], v["slug"], v["content"].split("\n\n")[-1])
                for v in history.versions(conn, store, slug)]
    finally:
        conn.close()


def test_every_kind_of_write_keeps_the_previous_version(paths):
    sql = other_program(paths)
    sql.execute("UPDATE entries SET content = '# a\n\ntwo', updated_at = 't2' WHERE slug = 'a'")
    sql.execute("INSERT OR REPLACE INTO entries (slug, store, label, content, created_at, updated_at)"
                " VALUES ('a', 's', 'a', '# a\n\nthree', 't0', 't3')")
    sql.execute("INSERT INTO entries (slug, store, label, content, created_at, updated_at)"
                " VALUES ('a', 's', 'a', '# a\n\nfour', 't0', 't4')"
                " ON CONFLICT (slug, store) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at")
    sql.execute("UPDATE entries SET archived = 1 WHERE slug = 'a'")
    sql.execute("DELETE FROM entries WHERE slug = 'a'")
    assert kept(paths) == [(1, "updated", "a", "one"), (2, "replaced", "a", "two"), (3, "replaced", "a", "three"),
                           (4, "updated", "a", "four"), (5, "deleted", "a", "four")]
    assert index_problems(sql) == {"wrong": 0, "orphans": 0}


def test_telemetry_and_vectors_are_not_versions(paths):
    sql = other_program(paths)
    sql.execute("UPDATE entries SET recall_count = recall_count + 1, last_recalled_at = 'now' WHERE slug = 'a'")
    sql.execute("UPDATE entries SET embedding = x'00000000', model = 'm' WHERE slug = 'a'")
    assert kept(paths) == []


def test_a_rename_carries_the_history_along(paths):
    sql = other_program(paths)
    sql.execute("UPDATE entries SET content = '# a\n\ntwo', updated_at = 't2' WHERE slug = 'a'")
    sql.execute("UPDATE entries SET slug = 'b', label = 'b' WHERE slug = 'a'")
    assert kept(paths, "a") == []
    assert kept(paths, "b") == [(1, "updated", "a", "one"), (2, "updated", "a", "two")]
    # A forgotten memory whose slug a rename takes keeps its versions, numbered first.
    sql.execute(INSERT, ("c", "s", "c", "# c\n\ngone", "t0", "t1"))
    sql.execute("DELETE FROM entries WHERE slug = 'c'")
    sql.execute("UPDATE entries SET slug = 'c', label = 'c' WHERE slug = 'b'")
    versions = [(v, c) for v, _, _, c in kept(paths, "c")]
    assert versions[0] == (1, "gone") and [c for _, c in versions[1:]] == ["one", "two", "two"]
    assert len({v for v, _ in versions}) == len(versions)


def test_retention_is_bounded_and_configurable(paths):
    db = MemoryDB.open(paths, history_keep=3)
    for i in range(2, 8):
        with db.transaction() as conn:
            conn.execute("UPDATE entries SET content = ?, updated_at = ? WHERE slug = 'a'", (f"# a\n\nv{i}", f"t{i}"))
    assert [v for v, _, _, _ in kept(paths)] == [4, 5, 6]  # the newest three; numbers never reused
    db.close()
    db = MemoryDB.open(paths, history_keep=1)
    with db.transaction():
        pass  # the first write transaction records the new setting and trims
    assert [c for _, _, _, c in kept(paths)] == ["v6"]
    db.close()
    db = MemoryDB.open(paths, history_keep=0)
    with db.transaction() as conn:
        conn.execute("UPDATE entries SET content = '# a\n\nlast', updated_at = 't9' WHERE slug = 'a'")
    assert kept(paths) == []


def test_history_never_blocks_a_write(paths):
    """Whatever state the history is in (a garbage retention setting written
    by hand), the original's writes go through: the triggers never fail."""
    sql = other_program(paths)
    sql.execute("INSERT OR REPLACE INTO thatch_cli_meta (key, value) VALUES ('history_keep', 'lots')")
    sql.execute("UPDATE entries SET content = '# a\n\ntwo', updated_at = 't2' WHERE slug = 'a'")
    sql.execute("DELETE FROM entries")
    assert sql.execute("SELECT count(*) FROM entries").fetchone()[0] == 0
