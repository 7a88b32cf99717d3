"""The one resolver for "where am I" (location/scope.py), and the places
that used to disagree: the shell prompt line and `thatch hygiene` judge an
unborn branch the same way."""

from __future__ import annotations

import json
import os
from pathlib import Path

from thatch_cli.location import scope
from thatch_cli.memory.records import Memory
from thatch_cli.storage.memories import MemoryDB

from helpers import git, thatch_process


def _save(branch: str | None, slug: str, store: str = "acme/widget") -> None:
    db = MemoryDB.open(Path(os.environ["THATCH_DB"]))
    db.save(Memory(store=store, slug=slug, label=slug, content=f"# {slug}\n\nx", branch=branch,
                   created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z"),
            overwrite=False, archived=None)
    db.close()


def _unborn_repo(tmp_path: Path) -> Path:
    """A repository without a single commit, HEAD on branch feat/new."""
    repo = tmp_path / "widget"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "feat/new")
    git(repo, "remote", "add", "origin", "git@github.com:acme/widget.git")
    return repo


def test_an_unborn_branch_is_local_not_orphaned(tmp_path):
    repo = _unborn_repo(tmp_path)
    place = scope.here(os.environ, repo)
    assert (place.store, place.branch) == ("acme/widget", "feat/new")
    assert "feat/new" in scope.local_branches(place.repo)
    assert scope.orphaned(place, ["feat/new", "gone"]) == ["gone"]


def test_prompt_and_hygiene_agree_on_an_unborn_branch(tmp_path):
    repo = _unborn_repo(tmp_path)
    _save("feat/new", "wip")
    _save("gone", "old")
    prompt = thatch_process(["_hook", "prompt"], cwd=repo)
    assert prompt.returncode == 0, prompt.stderr
    line = prompt.stdout.splitlines()[1]
    assert line == "thatch: acme/widget · 2 memories · 1 on feat/new · 1 orphaned (thatch hygiene)"
    report = thatch_process(["hygiene", "--json"], cwd=repo, env={**os.environ, "THATCH_MODEL": "fake:32"})
    assert report.returncode == 5, report.stderr
    orphans = json.loads(report.stdout)["orphans"]
    assert orphans["checked"] is True
    assert [b["branch"] for b in orphans["branches"]] == ["gone"]


def test_a_store_of_another_repository_is_not_judged_by_this_ones_branches(tmp_path, git_repo):
    repo = git_repo("widget", remote="git@github.com:acme/widget.git")
    place = scope.here(os.environ, repo)
    assert scope.belongs(place, "acme/widget") and not scope.belongs(place, "acme/other")
    told = scope.here({**os.environ, "THATCH_STORE": "team/notes"}, repo)
    assert told.store == "team/notes" and told.detected == "acme/widget" and told.overridden
    assert scope.belongs(told, "team/notes") and scope.belongs(told, "acme/widget")
    outside = scope.here(os.environ, tmp_path)
    assert outside.repo is None and not scope.belongs(outside, outside.store)


def test_default_scope_is_the_store_plus_global(tmp_path, git_repo):
    repo = git_repo("widget", remote="git@github.com:acme/widget.git")
    assert scope.default_scope(scope.here(os.environ, repo)) == ["acme/widget", "global"]
    assert scope.default_scope(scope.here({**os.environ, "THATCH_STORE": "global"}, repo)) == ["global"]
