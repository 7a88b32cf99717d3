"""Each change keeps the time it was made, whatever the order of syncs:
three machines with their own clocks (set apart by the test), database and
git identity, every ordering of edit, rename, forget and archive."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

T0 = datetime(2031, 3, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _shared(team, label: str = "Deploy"):
    ann, bob, cat = team(3)
    for clone in (ann, bob, cat):
        clone.at(at(0))
    ann.ok("remember", label, "Run make deploy.")
    ann.ok("remember", "Aardvark", "First in slug order.")
    for clone in (ann, bob, cat):
        clone.sync()
    return ann, bob, cat


def _everywhere(clones, label: str) -> list[dict | None]:
    return [clone.memory(label) for clone in clones]


@pytest.mark.parametrize("first", ["ann", "bob"])
def test_the_later_edit_wins_whichever_machine_syncs_first(team, first):
    ann, bob, cat = _shared(team)
    bob.at(at(42)).ok("remember", "Deploy", "bob's version", "--overwrite")
    ann.at(at(45)).ok("remember", "Deploy", "ann's version", "--overwrite")
    # bob changed another memory later: his sync must not stamp both in slug order.
    bob.at(at(50)).ok("remember", "Aardvark", "bob touched it", "--overwrite")
    order = [ann, bob] if first == "ann" else [bob, ann]
    for clone in (*order, cat, *order):
        clone.at(at(60)).sync()
    assert [m["content"] for m in _everywhere((ann, bob, cat), "Deploy")] == ["ann's version"] * 3


@pytest.mark.parametrize("first", ["ann", "bob"])
def test_an_edit_made_after_a_rename_follows_it_to_the_new_label(team, first):
    ann, bob, cat = _shared(team)
    ann.at(at(10)).ok("rename", "Deploy", "Deploying")
    bob.at(at(20)).ok("remember", "Deploy", "Run make deploy, then tag.", "--overwrite")
    order = [ann, bob] if first == "ann" else [bob, ann]
    for clone in (*order, cat, *order):
        clone.at(at(60)).sync()
    for clone in (ann, bob, cat):
        assert "Deploy" not in clone.labels(), clone.name
        assert clone.memory("Deploying")["content"] == "Run make deploy, then tag.", clone.name


@pytest.mark.parametrize("first", ["ann", "bob"])
def test_a_rename_made_after_an_edit_carries_the_edit(team, first):
    ann, bob, cat = _shared(team)
    bob.at(at(10)).ok("remember", "Deploy", "Run make deploy, then tag.", "--overwrite")
    ann.at(at(20)).ok("rename", "Deploy", "Deploying")
    order = [ann, bob] if first == "ann" else [bob, ann]
    for clone in (*order, cat, *order):
        clone.at(at(60)).sync()
    for clone in (ann, bob, cat):
        assert "Deploy" not in clone.labels(), clone.name
        assert clone.memory("Deploying") is not None, clone.name


@pytest.mark.parametrize(("forget_at", "edit_at"), [(10, 20), (20, 10)])
@pytest.mark.parametrize("first", ["ann", "bob"])
def test_forget_against_edit_the_later_one_wins(team, first, forget_at, edit_at):
    ann, bob, cat = _shared(team)
    ann.at(at(forget_at)).ok("forget", "Deploy")
    bob.at(at(edit_at)).ok("remember", "Deploy", "Still needed.", "--overwrite")
    order = [ann, bob] if first == "ann" else [bob, ann]
    for clone in (*order, cat, *order):
        clone.at(at(60)).sync()
    found = _everywhere((ann, bob, cat), "Deploy")
    if forget_at > edit_at:
        assert found == [None, None, None]
    else:
        assert [m and m["content"] for m in found] == ["Still needed."] * 3


@pytest.mark.parametrize(("archive_at", "edit_at"), [(10, 20), (20, 10)])
@pytest.mark.parametrize("first", ["ann", "bob"])
def test_archive_is_stamped_when_it_is_made(team, first, archive_at, edit_at):
    ann, bob, cat = _shared(team)
    ann.at(at(archive_at)).ok("archive", "Deploy")
    bob.at(at(edit_at)).ok("remember", "Deploy", "Still needed.", "--overwrite")
    order = [ann, bob] if first == "ann" else [bob, ann]
    for clone in (*order, cat, *order):
        clone.at(at(60)).sync()
    found = _everywhere((ann, bob, cat), "Deploy")
    expected = (True, "Run make deploy.") if archive_at > edit_at else (False, "Still needed.")
    assert [(m["archived"], m["content"]) for m in found] == [expected] * 3
