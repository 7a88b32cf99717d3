"""A forget made here is shared even when the remote has lost what it
forgets: the ref deleted, pruned from every clone, collected by gc."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("ann_first", [True, False])
@pytest.mark.parametrize("who_deletes", ["ann", "cat"])
def test_a_pending_forget_survives_the_refs_deletion(team, who_deletes, ann_first):
    ann, bob, cat = team(3)
    ann.ok("remember", "Old port", "The service listens on 8080.")
    ann.ok("remember", "Build", "make all")
    for clone in (ann, bob, cat):
        clone.sync()
    ann.ok("forget", "Old port")
    # The documented "remove all", then every clone prunes and collects.
    remover = ann if who_deletes == "ann" else cat
    remover.git("push", "-q", "origin", ":refs/thatch/memories")
    # ann drops her copy of the ref too, so nothing here remembers what was shared.
    ann.git("update-ref", "-d", "refs/thatch/memories")
    for clone in (ann, bob, cat):
        clone.git("fetch", "-q", "--prune", "origin")
        clone.git("reflog", "expire", "--expire=now", "--all")
        clone.git("gc", "-q", "--prune=now")
    order = (ann, bob, cat, ann, bob, cat) if ann_first else (bob, cat, ann, bob, cat)
    for clone in order:
        report = clone.sync()
        assert report["status"] in ("synced", "pulled", "up to date"), report
    for clone in (ann, bob, cat):
        assert clone.labels() == ["Build"], clone.name


def test_a_forget_from_before_the_first_sync_deletes_nobody_elses(team):
    ann, bob = team(2)
    bob.ok("remember", "Build", "bob's note")
    bob.sync()
    ann.ok("remember", "Build", "ann's old note")
    ann.ok("forget", "Build")  # later than bob's note, but before ann ever synced
    ann.sync(), bob.sync()
    assert ann.memory("Build")["content"] == bob.memory("Build")["content"] == "bob's note"
