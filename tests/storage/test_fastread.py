"""The fast reads (storage/fastread.py) and MemoryDB give one answer to
"which stores exist" and "which memories are live", whichever front door asks."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from thatch_cli.storage import fastread
from thatch_cli.storage.memories import MemoryDB

STORAGE = Path(__file__).resolve().parents[2] / "thatch_cli" / "storage"


def _row(conn: sqlite3.Connection, store: str, slug: str, text: str, archived: int = 0) -> None:
    conn.execute("INSERT INTO entries (slug, store, label, content, archived, created_at, updated_at)"
                 " VALUES (?, ?, ?, ?, ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
                 (slug, store, slug, f"# {slug}\n\n{text}", archived))


def _thatch(env: dict, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=env, capture_output=True, text=True,
                          timeout=120, cwd=env["HOME"])
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def test_a_store_only_rows_name_is_a_store_everywhere(isolated_env):
    """A row whose store has no `stores` entry (another program wrote it
    with foreign keys off) is searched by recall --all-stores, so it is
    listed by `stores`, by completion, and found by name."""
    path = Path(isolated_env["THATCH_DB"])
    MemoryDB.open(path).close()
    conn = sqlite3.connect(path)
    _row(conn, "ghost/repo", "kiwi", "a kiwi note")
    conn.commit()
    conn.close()
    env = {**os.environ, "THATCH_MODEL": "fake:16", "THATCH_STORE": "acme/widget"}

    recalled = json.loads(_thatch(env, "recall", "kiwi", "--all-stores", "--mode", "lexical", "--json"))
    assert "ghost/repo" in recalled["stores"] and [r["store"] for r in recalled["results"]] == ["ghost/repo"]
    stores = json.loads(_thatch(env, "stores", "--json"))["stores"]
    assert {"name": "ghost/repo", "memories": 1, "last_update": "2026-01-01T00:00:00.000Z"} in stores
    assert "ghost/repo" in _thatch(env, "_complete", "stores").splitlines()
    assert json.loads(_thatch(env, "list", "ghost/repo", "--json"))["memories"][0]["slug"] == "kiwi"
    db = MemoryDB.open(path)
    assert db.store_names() == fastread.store_names(db.conn) == ["ghost/repo", "global"]
    db.close()


def test_live_means_the_same_to_the_hot_paths_and_to_commands(isolated_env):
    path = Path(isolated_env["THATCH_DB"])
    db = MemoryDB.open(path)
    db.ensure_store("s")
    for slug, archived in (("a", 0), ("b", 1), ("c", 0)):
        _row(db.conn, "s", slug, "x", archived)
    assert [m.slug for m in db.list(["s"])] == ["a", "c"]
    assert [m.slug for m in db.list(["s"], archived=True)] == ["b"]
    assert fastread.branch_counts(db.conn, "s") == {None: 2}
    assert fastread.live(db.conn, "s", ("slug",)) == [("a",), ("c",)]
    assert fastread.live(db.conn, "s", ("slug",), no_such_field=1) == []  # a field an older file lacks
    db.close()


def test_the_conditions_are_spelled_once():
    """SQL for "live" and "every store" is written in fastread.py only; the
    rest of storage/ builds on its constants."""
    for path in STORAGE.glob("*.py"):
        if path.name == "fastread.py":
            continue
        text = path.read_text()
        assert not re.search(r"archived\s*=\s*0|FROM stores\b(?! WHERE name = \?)", text), path.name


def test_the_hot_paths_open_a_database_whose_path_sqlite_would_misread(tmp_path, monkeypatch):
    """"?", "#" and "%" mean something in an SQLite URI, a leading "//"
    would name a host, and "link/.." goes through the symlink: the hot paths
    open the very file the commands write, by the same name."""
    odd = tmp_path / os.fsdecode(b"a?b#c%20d \xc3\xa9\xff")  # and a byte that is not UTF-8
    (odd / "deep" / "real").mkdir(parents=True)
    (odd / "link").symlink_to(odd / "deep" / "real")  # link/.. is deep, not odd
    for name in ("x.db", "link/../x.db"):
        db = MemoryDB.open(odd / name)
        conn = sqlite3.connect(odd / name)
        _row(conn, "acme/widget", name.replace("/", "-"), "kept")
        conn.commit()
        conn.close()
        db.close()
    monkeypatch.chdir(odd)
    for name in ("x.db", "link/../x.db", "//" + str(odd / "x.db").lstrip("/")):
        conn = fastread.open_readonly(name)
        assert conn is not None, name
        slugs = {slug for (slug,) in conn.execute("SELECT slug FROM entries")}
        conn.close()
        expected = "link-..-x.db" if name.startswith("link") else "x.db"
        assert slugs == {expected}, name
    assert fastread.open_readonly(odd / "missing.db") is None
