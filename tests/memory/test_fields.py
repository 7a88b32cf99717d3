"""One description of a memory (memory/fields.py): what each layer derives from it
agrees with it, and a field added there alone reaches storage, history,
export and import, and the JSON shapes of an existing database."""

from __future__ import annotations

import ast
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from thatch_cli.memory import fields
from thatch_cli.memory.records import SYNCED_FIELDS, Memory
from thatch_cli.storage import history
from thatch_cli.storage.memories import MemoryDB

ROOT = Path(__file__).resolve().parents[2]


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def test_a_memory_is_its_fields():
    memory = Memory(store="s", slug="a", label="A", content="# A\n\nbody", embedding=b"\0" * 8)
    assert set(Memory.__slots__) == set(fields.NAMES)
    assert list(memory.columns()) == [f.column for f in fields.ENTRIES]
    assert list(memory.brief()) == [f.json for f in fields.BRIEF]
    assert set(memory.public()) == {f.json for f in fields.JSON} | set(fields.DERIVED_JSON)
    assert memory.public()["content"] == "body" and "embedding" not in memory.public()
    assert "embedding" not in repr(memory)


# A field kind's Python type, as a type checker reads it from Memory's annotations.
KIND_TYPES = {"text": "str", "line": "str | None", "name": "str | None", "int": "int | None", "count": "int",
              "flag": "bool", "blob": "bytes | None", "list": "tuple[str, ...]"}


def test_a_type_checker_sees_every_field_with_its_kinds_type():
    expected = {f.name: KIND_TYPES.get(f.kind) or ("str" if f.default == "" else "str | None")
                for f in fields.FIELDS}
    assert Memory.__annotations__ == expected
    assert list(Memory.__annotations__) == list(fields.NAMES)


def test_storage_reads_rows_by_name_and_the_tables_follow_the_fields(tmp_path):
    db = MemoryDB.open(tmp_path / "t.db")
    assert _columns(db.conn, "entries") == [f.column for f in fields.ENTRIES]
    assert _columns(db.conn, "thatch_cli_sync_marks")[2:] == [f.column for f in fields.MARKS]
    assert _columns(db.conn, "thatch_cli_history")[6:] == [f.column for f in fields.HISTORY]
    saved = Memory(store="s", slug="a", label="A", content="# A\n\nx", branch="b", confidence=3, archived=True,
                   created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z")
    db.save(saved, overwrite=False, archived=True)
    assert db.get("s", "a") == saved
    # The same row read from a file whose columns come in another order.
    other = tmp_path / "shuffled.db"
    conn = sqlite3.connect(other)
    names = [f.column for f in reversed(fields.ENTRIES)]
    conn.execute(f"CREATE TABLE entries ({', '.join(names)})")
    conn.execute(f"INSERT INTO entries VALUES ({','.join('?' * len(names))})",
                 [db.conn.execute(f"SELECT {n} FROM entries").fetchone()[0] for n in names])
    conn.commit()
    assert MemoryDB(conn).get("s", "a") == saved


def test_history_keeps_the_history_fields_and_compares_the_versioned_ones():
    assert history.COLUMNS == tuple(f.column for f in fields.HISTORY)
    for f in fields.VERSIONED:
        assert f"old.{f.column} IS NOT new.{f.column}" in history.TRIGGERS
    for f in fields.FIELDS:
        if not f.versioned:
            assert f"old.{f.column} IS NOT" not in history.TRIGGERS


def test_help_and_man_page_list_the_json_keys_of_the_fields():
    from thatch_cli.cli.declare import BRIEF, FULL
    from thatch_cli.gen.man import JSON_SHAPES

    assert fields.brief_keys() in BRIEF and fields.full_keys() in FULL
    assert fields.brief_keys() in JSON_SHAPES[0] and fields.full_keys() in JSON_SHAPES[0]
    readme = (ROOT / "README.md").read_text()
    assert f"A *brief* memory is `{fields.brief_keys()}`; a full one adds `{fields.full_keys()}`" in readme


def test_completion_offers_the_fields_marked_complete():
    from thatch_cli.hot.complete import KINDS
    from thatch_cli.integrations.completion_scripts import DYNAMIC
    from thatch_cli.integrations.completion_tree import value_kind

    assert KINDS == DYNAMIC == tuple(fields.COMPLETED)
    assert {"stores", "labels", "branches"} <= set(KINDS)
    for name, kind in (("store_arg", "stores"), ("label_b", "labels"), ("from_branch", "branches"),
                       ("query", "none")):
        assert value_kind({"name": name, "flag": False}) == kind


def test_no_other_module_spells_out_the_fields():
    """memory/fields.py is the one declaration: no other module of the package
    holds a literal collection of most of a memory's fields."""
    names, found = set(fields.NAMES), []
    for path in (ROOT / "thatch_cli").rglob("*.py"):
        if path.resolve() == Path(fields.__file__).resolve():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
            elif isinstance(node, ast.Dict):
                values = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            else:
                continue
            if len(values & names) > len(names) // 2:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_telemetry_vectors_and_personal_marks_are_not_synced():
    assert {f.name for f in fields.FIELDS if not f.synced} >= {
        "slug", "store", "embedding", "model", "recall_count", "last_recalled_at", "author", "private", "unreviewed"}
    assert fields.SYNCED == tuple(f for f in fields.FIELDS if f.synced)
    # The order is part of a record's content hash: changing it would re-send every memory
    # (a field declared since comes after these).
    assert SYNCED_FIELDS[:7] == ("label", "content", "branch", "confidence", "archived", "created_at", "updated_at")


# -- adding a field -----------------------------------------------------------------------

MOOD = '    Field("mood", "TEXT", "line", brief=True, versioned=True),\n'


def _package_with_a_new_field(tmp_path: Path, declared: str = MOOD) -> Path:
    """A copy of the package whose memory/fields.py declares one more field, as a
    developer adding one would write it: nothing else changes."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "thatch_cli", copy / "thatch_cli", ignore=shutil.ignore_patterns("__pycache__"))
    path = copy / Path(fields.__file__).resolve().relative_to(ROOT)
    text = path.read_text()
    anchor = text.index("\n)\n", text.index("FIELDS: tuple"))
    path.write_text(text[:anchor + 1] + declared + text[anchor + 1:])
    return copy


def _thatch(src: Path | None, env: dict, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    paths = [str(src)] if src else []
    run_env = {**env, "PYTHONPATH": os.pathsep.join(paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    # Run outside the checkout: the current directory comes first on sys.path.
    done = subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=run_env, input=input, capture_output=True,
                          text=True, timeout=120, cwd=env["HOME"])
    assert done.returncode == 0, (args, done.stderr)
    return done


def test_a_field_declared_once_reaches_every_layer(tmp_path, isolated_env):
    env = {**os.environ, "THATCH_MODEL": "fake:16", "THATCH_STORE": "s"}
    _thatch(None, env, "remember", "Old note", "written before the field existed")
    src = _package_with_a_new_field(tmp_path)

    # The existing file gains the column; the JSON shapes carry the key.
    shown = json.loads(_thatch(src, env, "show", "Old note", "--json").stdout)["memory"]
    assert "mood" in shown and shown["mood"] is None
    conn = sqlite3.connect(isolated_env["THATCH_DB"])
    assert "mood" in _columns(conn, "entries") and "mood" in _columns(conn, "thatch_cli_history")
    conn.close()

    # Import sets it (checked as a one-line text), export writes it, history keeps it.
    line = {"label": "Old note", "content": "# Old note\n\nrewritten", "mood": "calm"}
    _thatch(src, env, "import", "-", "--overwrite", input=json.dumps(line) + "\n")
    listed = json.loads(_thatch(src, env, "list", "--json").stdout)["memories"]
    assert listed[0]["mood"] == "calm"
    exported = [json.loads(x) for x in _thatch(src, env, "export").stdout.splitlines()]
    assert exported[0]["mood"] == "calm"
    versions = json.loads(_thatch(src, env, "history", "Old note", "--json").stdout)["versions"]
    assert versions[0]["memory"]["mood"] is None  # the version before the import
    bad = {"label": "Bad", "content": "# Bad\n\nx", "mood": "two\nlines"}
    done = subprocess.run([sys.executable, "-m", "thatch_cli", "import", "-"], input=json.dumps(bad) + "\n",
                          env={**env, "PYTHONPATH": str(src)}, capture_output=True, text=True, timeout=120,
                          cwd=env["HOME"])
    assert done.returncode == 5 and "'mood' contains a control character" in done.stdout + done.stderr

    # The thatch without the field still reads and writes the same file.
    assert json.loads(_thatch(None, env, "show", "Old note", "--json").stdout)["memory"]["content"] == "rewritten"
    _thatch(None, env, "remember", "Old note", "again", "--overwrite")
    assert json.loads(_thatch(src, env, "show", "Old note", "--json").stdout)["memory"]["mood"] == "calm"


URGENT = '    Field("urgent", "INTEGER NOT NULL DEFAULT 0", "flag", False, brief=True, versioned=True, original=False),\n'


def test_a_new_synced_field_re_sends_nothing_that_did_not_change(tmp_path, isolated_env):
    """thatch sync's record digests cover the synced fields: after declaring
    two more (a text and a flag), the next sync sends no memory whose values
    did not change, and one that did change still travels."""
    from helpers import git

    bare, clone = tmp_path / "team.git", tmp_path / "clone"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    (clone / "README").write_text("hello\n")
    git(clone, "add", "README")
    git(clone, "commit", "-qm", "init")
    git(clone, "push", "-q", "origin", "HEAD:main")
    env = {**os.environ, "THATCH_MODEL": "fake:16", "HOME": str(tmp_path / "home")}

    def thatch(src: Path | None, *args: str) -> dict:
        paths = [str(src)] if src else []
        run_env = {**env, "PYTHONPATH": os.pathsep.join(paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        done = subprocess.run([sys.executable, "-m", "thatch_cli", *args, "--json"], env=run_env,
                              capture_output=True, text=True, timeout=120, cwd=clone)
        assert done.returncode == 0, (args, done.stderr)
        return json.loads(done.stdout)

    thatch(None, "sync", "init", "--yes")
    for n in range(3):
        thatch(None, "remember", f"Note {n}", f"body {n}")
    assert thatch(None, "sync")["pushed"]["created"] == 3
    tip = git(clone, "ls-remote", str(bare), "refs/thatch/memories")

    src = _package_with_a_new_field(tmp_path)
    path = src / Path(fields.__file__).resolve().relative_to(ROOT)
    text = path.read_text()
    anchor = text.index("\n)\n", text.index("FIELDS: tuple"))
    path.write_text(text[:anchor + 1] + URGENT + text[anchor + 1:])

    assert thatch(src, "sync")["pushed"] == {"created": 0, "updated": 0, "deleted": 0}
    assert git(clone, "ls-remote", str(bare), "refs/thatch/memories") == tip
    thatch(src, "remember", "Note 1", "body 1, revised", "--overwrite")
    assert thatch(src, "sync")["pushed"] == {"created": 0, "updated": 1, "deleted": 0}


TOPICS = ('    Field("topics", "TEXT", "list", (), brief=True, versioned=True, overwrite="given", original=False,'
          ' item="topic", filter="Only memories filed under every topic given.", given="File it under this topic.",'
          ' complete="topics"),\n')


def test_a_list_field_declared_once_is_set_filtered_shown_moved_and_completed(tmp_path, isolated_env):
    """A `list` field needs no code of its own: `remember --topic`, `list`
    and `recall --topic` (all must match), its JSON array, export and import,
    history and completion all follow from its declaration."""
    env = {**os.environ, "THATCH_MODEL": "fake:16", "THATCH_STORE": "s"}
    src = _package_with_a_new_field(tmp_path, TOPICS)
    _thatch(src, env, "remember", "Deploy steps", "ship it with the release workflow", "--topic", "ci",
            "--topic", "release", "--topic", "ci")
    _thatch(src, env, "remember", "Lint rules", "ruff runs in ci before the release", "--topic", "ci")
    shown = json.loads(_thatch(src, env, "show", "Deploy steps", "--json").stdout)["memory"]
    assert shown["topics"] == ["ci", "release"]
    assert "topics: ci, release" in _thatch(src, env, "show", "Deploy steps").stdout

    def labels(*args: str) -> list[str]:
        found = json.loads(_thatch(src, env, *args, "--json").stdout)
        return sorted(m["label"] for m in found.get("memories", found.get("results", [])))

    assert labels("list", "--topic", "ci") == ["Deploy steps", "Lint rules"]
    assert labels("list", "--topic", "ci", "--topic", "release") == ["Deploy steps"]
    assert labels("recall", "release", "--topic", "release", "--floor", "0") == ["Deploy steps"]
    assert labels("list", "--topic", "nope") == []
    # An overwrite without --topic keeps them; the history names the change.
    _thatch(src, env, "remember", "Lint rules", "ruff and mypy run in ci", "--overwrite")
    assert labels("list", "--topic", "ci") == ["Deploy steps", "Lint rules"]
    _thatch(src, env, "remember", "Lint rules", "ruff and mypy run in ci", "--overwrite", "--topic", "style")
    versions = json.loads(_thatch(src, env, "history", "Lint rules", "--json").stdout)["versions"]
    assert versions[0]["changes"] == ["topics"] and versions[0]["memory"]["topics"] == ["ci"]
    assert _thatch(src, env, "_complete", "topics").stdout.split() == ["ci", "release", "style"]

    # Exported as an array; imported from one, or from the stored text a synced file carries.
    lines = [json.loads(x) for x in _thatch(src, env, "export").stdout.splitlines()]
    assert [m["topics"] for m in lines if m.get("label") == "Deploy steps"] == [["ci", "release"]]
    imported = [{"label": "From a file", "content": "# From a file\n\nx", "topics": ["b", "a", "b"]},
                {"label": "From sync", "content": "# From sync\n\ny", "topics": ",c,a,"}]
    _thatch(src, env, "import", "-", input="".join(json.dumps(x) + "\n" for x in imported))
    assert labels("list", "--topic", "a") == ["From a file", "From sync"]
    bad = {"label": "Bad", "content": "# Bad\n\nx", "topics": [1]}
    done = subprocess.run([sys.executable, "-m", "thatch_cli", "import", "-"], input=json.dumps(bad) + "\n",
                          env={**env, "PYTHONPATH": str(src)}, capture_output=True, text=True, timeout=120,
                          cwd=env["HOME"])
    assert done.returncode == 5 and "each topic is text" in done.stdout + done.stderr
    # The thatch without the field keeps the column through its own overwrite.
    _thatch(None, env, "remember", "Deploy steps", "ship it", "--overwrite")
    assert json.loads(_thatch(src, env, "show", "Deploy steps", "--json").stdout)["memory"]["topics"] == ["ci",
                                                                                                       "release"]
