"""Faults a database meets in real life, with real processes: a lock held
by another writer, a read-only file or mount, a corrupt or damaged file, a
THATCH_DB pointing nowhere, undecodable input, kill -9 in the middle of an
import or a re-embedding. Each one is one documented exit code and one
line, and nothing stored is lost."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from thatch_cli.storage import backup as copies
from thatch_cli.storage import opening
from thatch_cli.storage.maintenance import index_problems
from thatch_cli.storage.memories import MemoryDB

from helpers import HeldLock, read_only_prefix, stop_all, wait_until, writable_again

ENV = {"THATCH_MODEL": "fake:64", "THATCH_STORE": "acme/widget", "THATCH_DAEMON": "0"}


def run(args, db: Path, *, prefix: list[str] = (), input: str | bytes | None = None, timeout: float = 60,
        **env) -> subprocess.CompletedProcess:
    full = {**os.environ, **ENV, "THATCH_DB": str(db), **env}
    text = not isinstance(input, bytes)
    result = subprocess.run([*prefix, sys.executable, "-m", "thatch_cli", *args], env=full, input=input,
                            capture_output=True, text=text, timeout=timeout)
    stderr = result.stderr if text else result.stderr.decode()
    assert "Traceback" not in stderr, stderr
    return result


def seed(db: Path, count: int = 3) -> None:
    lines = "".join(json.dumps({"label": f"note {i}", "content": f"# note {i}\n\ndeploy step number {i}"}) + "\n"
                    for i in range(count))
    assert run(["import", "-"], db, input=lines).returncode == 0


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("thatch: error: "), stderr
    return lines[0]


# -- another process holds the lock -------------------------------------------------------------


@pytest.fixture
def short_lock_wait(monkeypatch):
    monkeypatch.setattr(opening, "LOCK_TIMEOUT_S", 0.3)


def test_a_write_under_another_writers_lock_is_exit_6_retryable(cli, isolated_env, short_lock_wait):
    db = Path(isolated_env["THATCH_DB"])
    assert cli("remember", "a", "first", **ENV).exit_code == 0
    with HeldLock(db):
        result = cli("remember", "b", "second", **ENV)
        assert result.exit_code == 6
        assert one_error_line(result.stderr) == "thatch: error: database is locked by another process; try again"
        result = cli("remember", "b", "second", "--json", **ENV)
        assert result.exit_code == 6 and json.loads(result.stdout) == {"error": {
            "code": "database", "message": "database is locked by another process; try again", "exit_code": 6,
            "retryable": True}}
    assert cli("remember", "b", "second", **ENV).exit_code == 0  # once the lock is gone


def test_recall_under_a_lock_returns_results_and_skips_the_stamps(cli, isolated_env, short_lock_wait):
    db = Path(isolated_env["THATCH_DB"])
    assert cli("remember", "release", "publish with twine", **ENV).exit_code == 0
    with HeldLock(db):
        result = cli("recall", "twine", "--json", **ENV)
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert [r["slug"] for r in data["results"]] == ["release"]
        assert "recall counts not updated: the database is locked by another process" in data["notices"]
        plain = cli("recall", "twine", **ENV)
        assert plain.exit_code == 0 and "release" in plain.stdout
        assert "recall counts not updated" in plain.stderr
    assert MemoryDB.open(db).get("acme/widget", "release").recall_count == 0
    assert cli("recall", "twine", **ENV).exit_code == 0
    assert MemoryDB.open(db).get("acme/widget", "release").recall_count == 1


def test_hot_paths_never_wait_long_behind_an_exclusive_lock(isolated_env, git_repo, tmp_path):
    """A database still in rollback-journal mode (as the original leaves it),
    exclusively locked: completion, the prompt and git hooks answer at once
    (a 10 s wait would overrun the subprocess timeouts below) and quietly."""
    db = Path(isolated_env["THATCH_DB"])
    seed(db, 1)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    repo = git_repo("widget")
    with HeldLock(db, exclusive=True):
        for args in (["_complete", "labels"], ["_hook", "prompt"], ["_githook", "post-checkout", "0", "0", "1"],
                     ["_githook", "branch-deleted", "--", "gone"]):
            result = subprocess.run([sys.executable, "-m", "thatch_cli", *args], cwd=repo, capture_output=True,
                                    text=True, timeout=5, env={**os.environ, **ENV})
            assert result.returncode == 0 and result.stderr == "", (args, result.stderr)
            said = {"branch-deleted": "thatch: the database is busy (another process is writing);"
                                      " the deletion of gone was not recorded\n"}
            assert result.stdout.endswith(said.get(args[1], "")) and "failed" not in result.stdout


# -- a read-only file or mount ----------------------------------------------------------------


def test_reads_work_on_a_read_only_mount_and_writes_say_why_not(tmp_path):
    home = tmp_path / "ro"
    home.mkdir()
    db = home / "thatch.db"
    seed(db)
    assert run(["recall", "deploy"], db).returncode == 0  # one stamp before the mount
    before = db.read_bytes()
    prefix = read_only_prefix(home)
    try:
        listing = run(["list", "--json"], db, prefix=prefix)
        assert listing.returncode == 0 and len(json.loads(listing.stdout)["memories"]) == 3
        assert run(["show", "note 1"], db, prefix=prefix).returncode == 0
        assert run(["stores"], db, prefix=prefix).returncode == 0
        assert run(["history", "note 1"], db, prefix=prefix).returncode == 0
        for mode in ("hybrid", "semantic", "lexical"):
            recall = run(["recall", "deploy step", "--mode", mode, "--json"], db, prefix=prefix)
            assert recall.returncode == 0, recall.stderr
            data = json.loads(recall.stdout)
            assert len(data["results"]) == 3 and data["mode"] == mode
            assert "recall counts not updated: the database is read-only" in data["notices"]
        complete = run(["_complete", "labels"], db, prefix=prefix)
        assert complete.returncode == 0 and "note 1" in complete.stdout.splitlines()
        write = run(["remember", "new", "text"], db, prefix=prefix)
        assert write.returncode == 6
        assert "read-only" in one_error_line(write.stderr)
        forget = run(["forget", "note 1", "--json"], db, prefix=prefix)
        assert forget.returncode == 6 and json.loads(forget.stdout)["error"]["code"] == "database"
        # The daemon (started inside the same read-only view) reads it too.
        served = run(["recall", "deploy step", "--json"], db, prefix=prefix, THATCH_DAEMON="1")
        assert served.returncode == 0 and "daemon unavailable" not in served.stderr, served.stderr
        assert len(json.loads(served.stdout)["results"]) == 3
    finally:
        stop_all(os.environ)
        if not prefix:
            writable_again(home)
    assert db.read_bytes() == before


# -- damaged files --------------------------------------------------------------------------------


def test_corrupt_and_damaged_databases_are_exit_6_and_left_as_they_are(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(os.urandom(8192))
    good = tmp_path / "good.db"
    seed(good, 40)
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(good.read_bytes()[:6000])
    malformed = tmp_path / "malformed.db"
    conn = sqlite3.connect(good)
    page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'entries'").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(good.read_bytes())
    data[(page - 1) * size:page * size] = os.urandom(size)  # the memories' b-tree page overwritten
    malformed.write_bytes(bytes(data))
    no_entries = tmp_path / "no-entries.db"
    no_entries.write_bytes(good.read_bytes())
    conn = sqlite3.connect(no_entries)
    conn.execute("DROP TABLE entries")
    conn.commit()
    conn.close()
    for path in (junk, truncated, malformed, no_entries):
        before = path.read_bytes()
        for args in (["list"], ["recall", "deploy"], ["remember", "x", "y"]):
            result = run(args, path)
            assert result.returncode == 6, (path.name, args, result.stderr)
            one_error_line(result.stderr)
        assert path.read_bytes() == before, path.name


def test_thatch_db_in_a_missing_directory_is_an_error_not_a_new_database(tmp_path, isolated_env):
    missing = tmp_path / "nowhere" / "thatch.db"
    result = run(["remember", "a", "b"], missing)
    assert result.returncode == 6 and "does not exist" in one_error_line(result.stderr)
    assert not missing.parent.exists()
    # Only the default location is created.
    env = {k: v for k, v in os.environ.items() if k not in ("THATCH_DB", "THATCH_DB_PATH")}
    result = subprocess.run([sys.executable, "-m", "thatch_cli", "remember", "a", "b"], capture_output=True,
                            text=True, env={**env, **ENV, "XDG_CONFIG_HOME": str(tmp_path / "fresh")})
    assert result.returncode == 0 and (tmp_path / "fresh" / "thatch" / "thatch.db").is_file()


# -- undecodable input ------------------------------------------------------------------------------


def test_invalid_utf8_in_arguments_or_stdin_is_exit_2(tmp_path):
    db = tmp_path / "t.db"
    env = {**os.environ, **ENV, "THATCH_DB": str(db)}
    base = [sys.executable, "-m", "thatch_cli"]
    bad_arg = subprocess.run([*base, "remember", b"caf\xe9", "body"], env=env, capture_output=True)
    assert bad_arg.returncode == 2
    assert bad_arg.stderr == b"thatch: error: argument 2 (b'caf\\xe9') is not valid UTF-8\n"
    as_json = subprocess.run([*base, "recall", b"\xff\xfe", "--json"], env=env, capture_output=True)
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["error"]["code"] == "invalid_input"
    for locale in ("C.UTF-8", "C"):
        bad_stdin = subprocess.run([*base, "remember", "label", "-"], env={**env, "LC_ALL": locale},
                                   input=b"caf\xe9 au lait", capture_output=True)
        assert bad_stdin.returncode == 2, bad_stdin.stderr
        assert bad_stdin.stderr.startswith(b"thatch: error: standard input is not valid UTF-8")
    assert subprocess.run([*base, "list", "--json"], env=env, capture_output=True).stdout.count(b'"slug"') == 0


# -- kill -9 in the middle of the work ----------------------------------------------------------------


def _consistent(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert index_problems(conn) == {"wrong": 0, "orphans": 0}
        return conn.execute("SELECT count(*) FROM entries").fetchone()[0]
    finally:
        conn.close()


def test_kill_9_during_import_loses_at_most_the_batch_in_flight(tmp_path):
    db = tmp_path / "t.db"
    seed(db, 1)
    source = tmp_path / "many.jsonl"
    total = 6000
    source.write_text("".join(json.dumps({"label": f"memory {i}", "content": f"fact number {i} " * 20}) + "\n"
                              for i in range(total)))
    env = {**os.environ, **ENV, "THATCH_DB": str(db)}
    process = subprocess.Popen([sys.executable, "-m", "thatch_cli", "import", str(source)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def imported() -> int:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute("SELECT count(*) FROM entries").fetchone()[0] - 1
        finally:
            conn.close()

    assert wait_until(lambda: imported() > 0, timeout=60, step=0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = _consistent(db) - 1
    assert 0 < kept < total and kept % 256 == 0  # whole batches only
    result = run(["import", str(source), "--json"], db)
    report = json.loads(result.stdout)
    assert (report["created"], report["skipped"]) == (total - kept, kept)
    assert _consistent(db) == total + 1


def test_kill_9_during_reindex_leaves_every_row_whole(tmp_path):
    db = tmp_path / "t.db"
    seed(db, 1)
    lines = "".join(json.dumps({"label": f"m{i}", "content": f"text {i} " * 30}) + "\n" for i in range(3000))
    assert run(["import", "-"], db, input=lines, THATCH_MODEL="fake:32").returncode == 0
    env = {**os.environ, **ENV, "THATCH_DB": str(db)}
    process = subprocess.Popen([sys.executable, "-m", "thatch_cli", "reindex"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def moved() -> int:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute("SELECT count(*) FROM entries WHERE model = 'fake:64'").fetchone()[0]
        finally:
            conn.close()

    assert wait_until(lambda: moved() > 1, timeout=60, step=0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert _consistent(db) == 3001
    conn = sqlite3.connect(db)
    widths = dict(conn.execute("SELECT model, min(length(embedding)) = max(length(embedding)) FROM entries"
                               " GROUP BY model"))
    conn.close()
    assert widths == {"fake:64": 1, "fake:32": 1} or widths == {"fake:64": 1}
    left = 3001 - moved()
    again = json.loads(run(["reindex", "--json"], db).stdout)
    assert (again["checked"], again["embedded"]) == (3001, left) and moved() == 3001


# -- damaged rows and indexes, and a backup killed half-way -------------------------------------------


def test_a_row_that_cannot_be_decoded_is_skipped_and_named_everything_else_works(tmp_path):
    """One label of bytes that are not UTF-8 used to make list, stores,
    hygiene and export fail for the whole database (exit 6)."""
    db = tmp_path / "t.db"
    seed(db, 3)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE entries SET label = CAST(X'FF62616421' AS TEXT) WHERE slug = 'note-1'")
    conn.execute("INSERT INTO stores VALUES (CAST(X'FE' AS TEXT))")
    conn.commit()
    conn.close()
    named = "thatch: skipped 1 memory that cannot be read (text that is not UTF-8): acme/widget note-1;" \
            " 'thatch export' saves everything else"
    listed = run(["list"], db)
    assert listed.returncode == 0 and named in listed.stderr
    assert sorted(line.split("\t")[0] for line in listed.stdout.splitlines()) == ["note 0", "note 2"]
    stores = run(["stores"], db)
    assert stores.returncode == 0 and "acme/widget\t3" in stores.stdout
    assert "skipped 1 store that cannot be read" in stores.stderr
    assert run(["recall", "deploy step"], db).returncode == 0
    hygiene = run(["hygiene", "--json"], db)
    assert hygiene.returncode == 5 and json.loads(hygiene.stdout)["unreadable"] == 1
    export = run(["export", "-o", str(tmp_path / "all.jsonl"), "--json"], db)
    assert export.returncode == 5 and json.loads(export.stdout)["unreadable"] == ["memory acme/widget note-1"]
    saved = [json.loads(line)["slug"] for line in (tmp_path / "all.jsonl").read_text().splitlines()
             if "_record" not in line]
    assert sorted(saved) == ["note-0", "note-2"]
    piped = run(["export"], db)
    assert piped.returncode == 5 and piped.stdout.count('"slug"') >= 2
    assert "left out 1 row(s) that cannot be read (text that is not UTF-8): memory acme/widget note-1" in piped.stderr


def test_remember_refuses_a_file_whose_indexes_are_damaged(tmp_path):
    """PRAGMA integrity_check reports the index damaged; remember used to
    write on, adding rows the index cannot find."""
    db = tmp_path / "t.db"
    seed(db, 5)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = 'CREATE INDEX entries_store_branch ON entries (branch, store)'"
                 " WHERE name = 'entries_store_branch'")
    conn.close()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] != "ok"
    conn.close()
    before = _consistent_rows(db)
    for args in (["remember", "new", "more text"], ["import", "-"]):
        result = run(args, db, input=json.dumps({"label": "imported", "content": "x"}) + "\n")
        said = one_error_line(result.stderr) if result.returncode == 6 else json.dumps(
            [result.returncode, result.stderr])
        assert result.returncode == 6, said
        assert said.startswith(f"thatch: error: not writing to {db}: it is damaged (the index entries_store_branch"
                               " does not find row 1;"), said
    assert _consistent_rows(db) == before
    conn = sqlite3.connect(db)
    conn.execute("REINDEX")
    conn.commit()
    conn.close()
    assert run(["remember", "new", "more text"], db).returncode == 0


def _consistent_rows(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM entries NOT INDEXED").fetchone()[0]
    finally:
        conn.close()


def test_kill_9_during_a_backup_leaves_nothing_at_its_name(tmp_path):
    """A backup killed half-way used to leave an empty file at the name
    asked for, and the next `backup` to it was refused."""
    db = tmp_path / "t.db"
    seed(db, 1)
    lines = "".join(json.dumps({"label": f"m{i}", "content": f"text {i} " * 200}) + "\n" for i in range(3000))
    assert run(["import", "-"], db, input=lines).returncode == 0
    env = {**os.environ, **ENV, "THATCH_DB": str(db)}
    folder = tmp_path / "backups"
    folder.mkdir()
    for attempt in range(3):
        target = folder / f"b{attempt}.db"
        process = subprocess.Popen([sys.executable, "-m", "thatch_cli", "backup", str(target)], env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert wait_until(lambda: any(folder.iterdir()), timeout=60, step=0.002)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        assert not target.exists() or copies.verify(target)["entries"] == 3001, attempt
        result = run(["backup", str(target), "--json"], db) if not target.exists() else None
        assert result is None or (result.returncode == 0 and json.loads(result.stdout)["verified"]), result
        for leftover in folder.iterdir():
            if leftover.name.startswith("."):
                leftover.unlink()
    assert sorted(p.name for p in folder.iterdir()) == ["b0.db", "b1.db", "b2.db"]
