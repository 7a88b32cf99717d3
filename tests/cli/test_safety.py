"""`thatch history`, `restore-memory`, `backup` and `restore`, and the
verified backup taken before a schema upgrade changes a file thatch did not
create. Real SQLite files, real processes where another one matters."""

from __future__ import annotations

import json
import os
import pty
import select
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from thatch_cli.storage import backup as copies
from thatch_cli.storage import schema
from thatch_cli.storage.memories import MemoryDB

from helpers import ORIGINAL_SCHEMA

ENV = {"THATCH_STORE": "acme/widget"}


def run_json(cli, *args, **kwargs):
    result = cli(*args, "--json", **kwargs)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.stdout)


def edit_history(cli):
    """Release: created, overwritten, archived, unarchived, then forgotten."""
    assert cli("remember", "Release", "tag and push", **ENV).exit_code == 0
    assert cli("remember", "Release", "tag, build, upload", "--overwrite", **ENV).exit_code == 0
    assert cli("remember", "Release", "tag, build, upload", "--overwrite", "--archived", **ENV).exit_code == 0
    assert cli("remember", "Release", "tag, build, twine upload", "--overwrite", "--no-archived",
               "--confidence", "8", **ENV).exit_code == 0
    assert cli("forget", "release", **ENV).exit_code == 0


# -- history -------------------------------------------------------------------------------------


def test_history_lists_every_kept_version_newest_first(cli):
    edit_history(cli)
    code, data = run_json(cli, "history", "Release", **ENV)
    assert code == 0 and data["forgotten"] is True and data["current"] is None
    assert (data["store"], data["slug"], data["label"]) == ("acme/widget", "release", "Release")
    versions = data["versions"]
    assert [v["version"] for v in versions] == [4, 3, 2, 1]
    assert [v["changes"] for v in versions] == [["forgotten"], ["content", "confidence", "unarchived"],
                                                ["archived"], ["content"]]
    assert [v["memory"]["content"] for v in versions] == ["tag, build, twine upload", "tag, build, upload",
                                                          "tag, build, upload", "tag and push"]
    assert versions[0]["event"] == "deleted" and versions[0]["recorded_at"].endswith("Z")
    plain = cli("history", "release", **ENV)
    assert plain.stdout.splitlines()[0] == "Release (acme/widget, slug release): forgotten"
    assert plain.stdout.splitlines()[1].split("\t")[:3] == ["4", versions[0]["recorded_at"], "forgotten"]
    assert "thatch restore-memory Release --version N" in plain.stderr


def test_restore_memory_brings_back_a_forgotten_or_earlier_version_and_can_be_undone(cli):
    edit_history(cli)
    code, data = run_json(cli, "restore-memory", "Release", **ENV)  # undo the forget
    assert code == 0 and data["status"] == "restored" and data["version"] == 4 and data["previous"] is None
    assert data["memory"]["content"] == "tag, build, twine upload" and data["memory"]["confidence"] == 8
    assert data["memory"]["has_vector"] is True
    code, data = run_json(cli, "restore-memory", "Release", "--version", "1", **ENV)
    assert code == 0 and data["memory"]["content"] == "tag and push"
    assert data["previous"]["confidence"] == 8
    assert run_json(cli, "show", "Release", **ENV)[1]["memory"]["content"] == "tag and push"
    # The restore itself is a version: undo it.
    code, data = run_json(cli, "history", "Release", **ENV)
    assert data["versions"][0]["memory"]["content"] == "tag, build, twine upload"
    assert run_json(cli, "restore-memory", "Release", **ENV)[1]["memory"]["content"] == "tag, build, twine upload"
    same = next(v["version"] for v in run_json(cli, "history", "Release", **ENV)[1]["versions"]
                if v["memory"]["content"] == "tag, build, twine upload")
    assert run_json(cli, "restore-memory", "Release", "--version", str(same), **ENV)[1]["status"] == "unchanged"
    plain = cli("restore-memory", "Release", "--version", "1", **ENV)
    assert plain.stdout == "Restored 'Release' in acme/widget to version 1; the version it replaced is kept" \
                           " in its history\n"
    # The memory is searchable again, by its words and its vector.
    found = run_json(cli, "recall", "tag push", **ENV)[1]["results"]
    assert found[0]["slug"] == "release" and found[0]["match"] == "both"


def test_restore_memory_mistakes_are_one_line(cli):
    edit_history(cli)
    for args, code, text in [
        (("restore-memory", "Release", "--version", "9"), 3, "has no version 9 (kept: 1, 2, 3, 4;"),
        (("restore-memory", "nothing"), 3, "no memory labelled 'nothing', and no history of one"),
        (("history", "nothing"), 3, "no memory labelled 'nothing', and no history of one"),
        (("restore-memory", "Release", "--version", "0"), 2, "--version must be 1 or more"),
    ]:
        result = cli(*args, **ENV)
        assert result.exit_code == code and text in result.stderr and len(result.stderr.splitlines()) == 1, result


def test_restoring_a_version_from_before_a_rename(cli, isolated_env):
    assert cli("remember", "Old name", "body", **ENV).exit_code == 0
    db = MemoryDB.open(Path(isolated_env["THATCH_DB"]))
    with db.transaction() as conn:  # a rename, as `thatch rename` or the original's SQL would do it
        conn.execute("UPDATE entries SET slug = 'new-name', label = 'New name', content = '# New name\n\nbody'"
                     " WHERE slug = 'old-name'")
    db.close()
    code, data = run_json(cli, "history", "New name", **ENV)
    assert [v["changes"] for v in data["versions"]] == [["label", "content"]]
    assert cli("remember", "Old name", "someone else", **ENV).exit_code == 0
    result = cli("restore-memory", "New name", **ENV)
    assert result.exit_code == 4 and "already holds the slug 'old-name'" in result.stderr
    assert cli("forget", "Old name", **ENV).exit_code == 0
    code, data = run_json(cli, "restore-memory", "New name", **ENV)
    assert code == 0 and data["memory"]["slug"] == "old-name" and data["memory"]["label"] == "Old name"


def test_retention_comes_from_the_environment(cli):
    for i in range(5):
        assert cli("remember", "Note", f"version {i}", "--overwrite", THATCH_HISTORY_KEEP="2", **ENV).exit_code == 0
    code, data = run_json(cli, "history", "Note", THATCH_HISTORY_KEEP="2", **ENV)
    assert [v["memory"]["content"] for v in data["versions"]] == ["version 3", "version 2"]
    result = cli("remember", "Note", "x", "--overwrite", THATCH_HISTORY_KEEP="lots", **ENV)
    assert result.exit_code == 2
    assert result.stderr == "thatch: error: THATCH_HISTORY_KEEP='lots' is not a valid history.keep: expected a whole number, got 'lots'\n"


def test_history_on_a_terminal_escapes_control_characters(isolated_env, tmp_path):
    env = {**os.environ, "THATCH_MODEL": "fake:64", **ENV, "TERM": "xterm"}
    base = [sys.executable, "-m", "thatch_cli"]
    for body in ("first \x1b]0;pwned\x07 title", "second"):
        subprocess.run([*base, "remember", "Evil", body, "--overwrite"], env=env, check=True, capture_output=True)
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(base[0], [*base, "history", "Evil"], env)
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 30)
        try:
            chunk = os.read(fd, 65536) if ready else b""
        except OSError:
            chunk = b""
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    text = out.decode("utf-8", "replace")
    assert "\\x1b]0;pwned\\x07" in text and "\x07" not in text and "]0;pwned" not in text.replace("\\x1b]0", "")


# -- backup and restore -------------------------------------------------------------------------


def test_backup_is_verified_private_and_never_overwrites(cli, isolated_env, tmp_path):
    edit_history(cli)
    assert cli("remember", "Keep", "me", **ENV).exit_code == 0
    code, data = run_json(cli, "backup")
    db = Path(isolated_env["THATCH_DB"])
    made = Path(data["backup"])
    assert code == 0 and made.parent == db.parent and made.name.startswith("thatch.db.2026")
    assert data["verified"] is True and data["memories"] == 1 and data["tables"]["thatch_cli_history"] == 4
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert copies.verify(made) == data["tables"]
    code, data = run_json(cli, "backup", str(tmp_path))
    assert code == 0 and Path(data["backup"]).parent == tmp_path
    victim = tmp_path / "victim"
    victim.write_text("precious")
    taken = tmp_path / "taken.db"
    taken.symlink_to(victim)
    for target in (victim, taken):
        result = cli("backup", str(target))
        assert result.exit_code == 4 and "never overwrites" in result.stderr
    assert victim.read_text() == "precious"
    result = cli("backup", str(tmp_path / "no" / "dir.db"))
    assert result.exit_code == 2 and not (tmp_path / "no").exists()


def test_backup_while_another_process_writes(cli, isolated_env, tmp_path):
    assert cli("remember", "seed", "x", **ENV).exit_code == 0
    writer = subprocess.Popen([sys.executable, "-c", """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
for i in range(100000):
    conn.execute("INSERT INTO entries (slug, store, label, content, created_at, updated_at)"
                 " VALUES (?, 'acme/widget', ?, ?, 't', 't')", (f"w{i}", f"w{i}", f"# w{i}\\n\\nbody"))
"""], env=os.environ)
    try:
        time.sleep(0.2)
        for _ in range(3):
            code, data = run_json(cli, "backup")
            assert code == 0 and data["verified"], data
            assert copies.verify(Path(data["backup"]))["entries"] == data["memories"] >= 1
    finally:
        writer.kill()
        writer.wait()


def test_restore_puts_a_backup_back_and_keeps_what_it_replaced(cli, isolated_env, tmp_path):
    db = Path(isolated_env["THATCH_DB"])
    assert cli("remember", "Before", "the good state", **ENV).exit_code == 0
    backup = Path(run_json(cli, "backup", str(tmp_path / "good.db"))[1]["backup"])
    assert cli("forget", "Before", **ENV).exit_code == 0
    assert cli("remember", "After", "a later state", **ENV).exit_code == 0
    reader = sqlite3.connect(db)  # a process that has the database open meanwhile (the daemon, say)
    assert reader.execute("SELECT slug FROM entries").fetchall() == [("after",)]
    code, data = run_json(cli, "restore", str(backup))
    assert code == 0 and data["memories"] == 1 and data["previous_verified"] is True
    assert reader.execute("SELECT slug FROM entries").fetchall() == [("before",)]
    reader.close()
    assert run_json(cli, "show", "Before", **ENV)[1]["memory"]["content"] == "the good state"
    assert run_json(cli, "recall", "good state", **ENV)[1]["results"][0]["slug"] == "before"
    previous = Path(data["previous_backup"])
    assert copies.verify(previous)["entries"] == 1
    plain = cli("restore", str(previous), **ENV)
    assert plain.exit_code == 0 and "undo with: thatch restore" in plain.stdout
    assert run_json(cli, "show", "After", **ENV)[0] == 0


def test_restore_refuses_what_is_not_a_usable_backup(cli, isolated_env, tmp_path):
    db = Path(isolated_env["THATCH_DB"])
    assert cli("remember", "Keep", "me", **ENV).exit_code == 0
    MemoryDB.open(db).close()
    before = db.read_bytes()
    junk = tmp_path / "junk.bak"
    junk.write_bytes(os.urandom(10000))
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE notes (x)")
    newer = tmp_path / "newer.db"
    MemoryDB.open(newer).conn.execute("UPDATE thatch_cli_meta SET value = '99' WHERE key = 'schema_version'")
    for path, problem in ((junk, "not a readable database"), (other, "no entries table"),
                          (newer, "newer thatch"), (tmp_path / "missing", "no backup file")):
        result = cli("restore", str(path))
        assert result.exit_code in (3, 6) and problem in result.stderr, result
    assert db.read_bytes() == before


def test_restore_over_a_corrupt_database_keeps_its_bytes(cli, isolated_env, tmp_path):
    db = Path(isolated_env["THATCH_DB"])
    assert cli("remember", "Keep", "me", **ENV).exit_code == 0
    backup = Path(run_json(cli, "backup")[1]["backup"])
    damaged = os.urandom(4096)
    db.write_bytes(damaged)
    assert cli("list", **ENV).exit_code == 6
    code, data = run_json(cli, "restore", str(backup))
    assert code == 0 and data["previous_verified"] is False
    assert Path(data["previous_backup"]).read_bytes() == damaged
    assert run_json(cli, "show", "Keep", **ENV)[0] == 0


# -- the backup before an upgrade ------------------------------------------------------------------


ORIGINAL = ORIGINAL_SCHEMA + """
CREATE TABLE predictions (id INTEGER PRIMARY KEY, text TEXT);
INSERT INTO entries (slug, store, label, content, model, created_at, updated_at)
  VALUES ('a', 'global', 'a', '# a\n\nfrom the original', 'Xenova/bge-small-en-v1.5', 't', 't');
INSERT INTO predictions (text) VALUES ('p');
"""


def original_db(path: Path) -> bytes:
    conn = sqlite3.connect(path)
    conn.executescript(ORIGINAL)
    conn.close()
    return path.read_bytes()


def test_the_first_upgrade_of_a_foreign_file_is_backed_up_first(cli, isolated_env):
    db = Path(isolated_env["THATCH_DB"])
    original = original_db(db)
    # Machine-facing paths never migrate: the file stays as the original left it.
    for hot in (["_complete", "labels"], ["_hook", "prompt"]):
        subprocess.run([sys.executable, "-m", "thatch_cli", *hot], env=os.environ, capture_output=True, timeout=30)
        assert db.read_bytes() == original and list(db.parent.glob("*.bak")) == []
    assert cli("list", "global").stdout.split("\t")[0] == "a"
    [made] = db.parent.glob(f"thatch.db.before-schema-{schema.SCHEMA_VERSION}.*.bak")
    assert copies.verify(made) == {"dedup_pairs": 0, "entries": 1, "predictions": 1, "stores": 1}
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert cli("list", "global").exit_code == 0 and len(list(db.parent.glob("*.bak"))) == 1  # once


def test_an_upgrade_whose_backup_fails_changes_nothing(cli, isolated_env, monkeypatch):
    db = Path(isolated_env["THATCH_DB"])
    original = original_db(db)

    def fail(*args, **kwargs):
        raise copies.BackupFailed("the disk is full")

    working = copies.copy_verified
    monkeypatch.setattr(copies, "copy_verified", fail)
    result = cli("list", "global")
    assert result.exit_code == 6
    assert result.stderr == (f"thatch: error: not upgrading {db} (schema 0 to {schema.SCHEMA_VERSION}): the disk"
                             " is full; nothing was changed\n")
    assert db.read_bytes() == original
    monkeypatch.setattr(copies, "copy_verified", working)
    assert cli("list", "global").stdout.split("\t")[0] == "a"


@pytest.mark.parametrize("count", [3])
def test_verify_rejects_a_copy_that_lost_rows(tmp_path, count):
    path = tmp_path / "a.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(count)])
    conn.commit()
    conn.close()
    assert copies.verify(path) == {"t": count}
    with pytest.raises(copies.BackupFailed, match="row counts differ in t"):
        copies.verify(path, {"t": count + 1})


def test_backups_keep_the_newest_and_say_what_they_removed(cli, isolated_env, tmp_path, make_ctx):
    """backup.keep (here 2) backups of thatch's naming stay in a folder; the older ones go, by name,
    and a file the user named is never touched."""
    from datetime import datetime, timedelta, timezone

    cli("remember", "Note", "text", "--store", "s")
    folder = tmp_path / "backups"
    folder.mkdir()
    mine = folder / "thatch.db.my-own-copy.bak"
    mine.write_text("not ours")
    made = []
    for n in range(4):
        ctx = make_ctx(clock=lambda n=n: datetime(2026, 11, 30, 12, n, tzinfo=timezone.utc) + timedelta(seconds=n),
                       THATCH_BACKUP_KEEP="2")
        result = cli("backup", str(folder), "--json", ctx=ctx)
        assert result.exit_code == 0, result.stderr
        made.append(result.json())
    assert [Path(p).name for p in made[2]["removed"]] == ["thatch.db.20261130T120000Z.bak"]
    assert sorted(p.name for p in folder.iterdir()) == [
        "thatch.db.20261130T120202Z.bak", "thatch.db.20261130T120303Z.bak", mine.name]
    ctx = make_ctx(clock=lambda: datetime(2026, 11, 30, 13, 0, tzinfo=timezone.utc), THATCH_BACKUP_KEEP="1")
    text = cli("backup", str(folder), ctx=ctx).stdout
    assert ("Removed 2 older backups (backup.keep): thatch.db.20261130T120202Z.bak, thatch.db.20261130T120303Z.bak"
            in text)
    assert mine.read_text() == "not ours"
    assert cli("backup", ctx=make_ctx(THATCH_BACKUP_KEEP="0")).exit_code == 2  # at least 1
