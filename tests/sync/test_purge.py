"""`thatch sync purge` stays purged: no teammate's sync re-attaches the old
history, and content purged once is never published again."""

from __future__ import annotations

import subprocess

from helpers import git, git_env

SECRET = "It was hunter2 on staging."


def _reachable(bare, sha: str) -> bool:
    objects = git(bare, "rev-list", "--objects", "refs/thatch/memories")
    return any(line.split()[0] == sha for line in objects.splitlines())


def test_a_teammate_with_the_old_history_does_not_bring_it_back(team, tmp_path):
    ann, bob, cat = team(3)
    ann.ok("remember", "Old key", SECRET)
    ann.ok("remember", "Keep me", "Useful.")
    for clone in (ann, bob, cat):
        clone.sync()
    blob = git(ann.path, "rev-parse", "refs/thatch/memories:" + _path("old-key"))
    purged = ann.ok("sync", "purge", "Old key", "--json").json()
    assert not _reachable(ann.remote, blob)
    # bob and cat still hold the old commits; each pushes something of their own.
    bob.ok("remember", "Bob's note", "Another.")
    assert bob.sync()["status"] == "synced"
    cat.ok("remember", "Cat's note", "Another.")
    assert cat.sync()["status"] == "synced"
    assert not _reachable(ann.remote, blob)
    fresh = tmp_path / "fresh"
    git(tmp_path, "init", "-q", "--bare", str(fresh))
    git(fresh, "fetch", "-q", f"file://{ann.remote}", "+refs/thatch/memories:refs/thatch/memories")
    assert subprocess.run(["git", "cat-file", "-e", blob], cwd=fresh, env=git_env()).returncode != 0
    bob.sync()
    assert bob.labels() == cat.labels() == ["Bob's note", "Cat's note", "Keep me"]
    notices = " ".join(purged["notices"])
    assert "thatch sync" in notices and "git gc --prune=now" in notices  # what each teammate must do


def test_purged_content_is_not_published_again(team):
    ann, bob = team(2)
    ann.ok("remember", "Old key", SECRET)
    ann.sync(), bob.sync()
    ann.ok("sync", "purge", "Old key")
    bob.sync()
    assert bob.memory("Old key") is None
    # An old export imported again, or the note typed again: the same text stays here.
    bob.ok("remember", "Old key", SECRET)
    report = bob.sync()
    assert [h["label"] for h in report["held"]] == ["Old key"] and "purged" in report["held"][0]["reason"]
    ann.sync()
    assert ann.memory("Old key")["private"] is True
    assert '"deleted":true' in git(ann.remote, "show", "refs/thatch/memories:" + _path("old-key"))
    assert SECRET not in git(ann.remote, "log", "-p", "refs/thatch/memories")


def _path(slug: str) -> str:
    from thatch_cli.sync.records import path_of

    return path_of(slug)
