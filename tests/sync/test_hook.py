"""A plain `git fetch` (or pull) brings teammates' memories in: thatch's
reference-transaction hook starts the import in the background, so git
never waits for it, and never fails because of it."""

from __future__ import annotations

import subprocess
import time

from thatch_cli.integrations import githooks


def _git(clone, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=clone.path, env={**clone.env, "THATCH_MODEL": "fake:64", **env},
                          capture_output=True, text=True, timeout=60, check=False)


def _wait_for(predicate, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_git_fetch_imports_in_the_background(team):
    ann, bob = team(2)
    assert [h.state for h in githooks.status(bob.path).hooks] == ["installed", "installed"]
    ann.ok("remember", "Fetched by git", "Arrives with a plain git fetch.")
    ann.sync()
    started = time.monotonic()
    fetched = _git(bob, "fetch")
    assert fetched.returncode == 0, fetched.stderr
    assert time.monotonic() - started < 10  # git did not wait for the import (which embeds)
    assert _wait_for(lambda: bob.labels() == ["Fetched by git"]), bob.labels()
    assert bob.memory("Fetched by git")["author"] == "Ann <ann@example.com>"
    # git pull brings the next one the same way; a fetch with nothing new starts nothing.
    ann.ok("remember", "Pulled by git", "Arrives with git pull.")
    ann.sync()
    assert _git(bob, "pull", "-q").returncode == 0
    assert _wait_for(lambda: "Pulled by git" in bob.labels())
    assert _git(bob, "fetch").returncode == 0


def test_a_broken_import_never_breaks_git(team):
    ann, bob = team(2)
    ann.ok("remember", "Any", "Memory.")
    ann.sync()
    bob.db.write_bytes(b"not a database at all")
    fetched = _git(bob, "fetch")
    assert fetched.returncode == 0 and "thatch:" not in fetched.stderr and "error" not in fetched.stderr
    assert bob.git("rev-parse", "refs/thatch/remotes/origin/memories")
