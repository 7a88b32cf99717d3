"""How many git processes one sync starts: a no-op sync asks git for its
remote, fetches and lists the tree; one change nobody raced adds who commits and
the push, and needs no fetch; a restored database over an existing cache reads every file in one
pass, not one `git cat-file` per memory. Counted with a `git` on PATH that
logs each call of thatch's own (not the ones git starts for itself)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

WRAPPER = """#!/bin/sh
case "$(ps -o comm= -p $PPID 2>/dev/null)" in git*) ;; *) echo "$1" >> "{log}" ;; esac
exec "{git}" "$@"
"""


@pytest.fixture
def counted(tmp_path):
    """`counted(clone)`: the clone's git calls are logged; returns a reader of the log."""
    real = shutil.which("git")
    log = tmp_path / "git.log"
    folder = tmp_path / "counting-bin"
    folder.mkdir()
    (folder / "git").write_text(WRAPPER.format(log=log, git=real))
    (folder / "git").chmod(0o755)

    def wrap(clone) -> callable:
        clone.env["PATH"] = f"{folder}{os.pathsep}{clone.env['PATH']}"

        def calls() -> list[str]:
            found = log.read_text().split() if log.exists() else []
            log.unlink(missing_ok=True)
            return found

        return calls

    return wrap


def test_a_sync_starts_few_git_processes(team, counted):
    ann, bob = team(2)
    ann.ok("remember", "First", "One.")
    ann.sync()
    calls = counted(ann)
    calls()
    assert ann.sync()["status"] == "up to date"
    assert sorted(calls()) == ["config", "fetch", "ls-tree"]
    # One change nobody raced: pushed against the tip fetched last (the lease checks it), no fetch.
    ann.ok("remember", "Second", "Two.")
    assert ann.sync()["status"] == "synced"
    assert sorted(calls()) == ["config", "ls-tree", "push", "var"]
    # Someone pushed meanwhile: the lease loses, and the next round fetches and merges.
    bob.ok("remember", "Bob's", "Three.")
    bob.sync()
    ann.ok("remember", "Third", "Four.")
    report = ann.sync()
    assert report["status"] == "synced" and report["pulled"]["created"] == 1 and report["rounds"] == 1
    assert ann.labels() == ["Bob's", "First", "Second", "Third"]
    bob.sync()
    assert bob.labels() == ann.labels()


def test_a_restored_database_reads_the_tree_in_one_pass(team, counted):
    ann, bob = team(2)
    lines = "".join(f'{{"label": "Note {i}", "content": "# Note {i}\\\\n\\\\nText {i}."}}\n' for i in range(60))
    source = Path(ann.path) / "notes.jsonl"
    source.write_text(lines)
    ann.ok("import", str(source))
    ann.sync()
    bob.sync()  # bob's cache now knows every file
    bob.db.unlink()  # a fresh database over the same clone and cache
    calls = counted(bob)
    report = bob.sync()
    assert report["pulled"]["created"] == 60
    made = calls()
    assert made.count("cat-file") <= 1 and len(made) <= 6, made


def test_a_no_op_sync_merges_once(team, monkeypatch):
    """The first round merges the tip git fetched last; when the fetch that
    follows brings nothing new, that tip is not merged a second time."""
    from thatch_cli.sync import merge

    ann, bob = team(2)
    ann.ok("remember", "First", "One.")
    ann.sync()
    real, merged = merge.merge, []

    def counting(*args, **kwargs):
        merged.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(merge, "merge", counting)
    assert ann.sync()["status"] == "up to date"
    assert len(merged) == 1
    bob.sync()
    bob.ok("remember", "Bob's", "Two.")
    bob.sync()
    merged.clear()
    report = ann.sync()  # the fetch brings bob's: merged as well
    assert report["status"] == "pulled" and report["pulled"]["created"] == 1 and len(merged) == 2
    assert ann.labels() == ["Bob's", "First"]
