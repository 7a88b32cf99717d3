"""Where am I: the store and branch a command run in a directory works on,
the repository around it, and which branches that repository has.

The one resolver for every front door: commands (through Context), the
shell prompt, git hooks, completion and agent hooks. Standard library only
(dulwich is imported only when the identity cache misses), so hot paths can
use it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping, NamedTuple

from .. import paths
from . import gitfs

GLOBAL = "global"


class Place(NamedTuple):
    store: str  # THATCH_STORE when set, else the detected store
    detected: str  # the repository's (or directory's) own identity
    overridden: bool  # THATCH_STORE is set
    repo: gitfs.GitLocation | None  # the repository around the directory
    branch: str | None  # HEAD's branch, unborn included; None when detached or outside a repository


def detected_store(env: Mapping[str, str], cwd: Path) -> str:
    """The repository's identity (owner/repo, else its name, else the
    directory's), from the per-repository cache when its config is unchanged."""
    from .identity import resolve_store

    return resolve_store(cwd, paths.cache_dir(env) / "repos.json")


def here(env: Mapping[str, str], cwd: Path) -> Place:
    override = (env.get("THATCH_STORE") or "").strip()
    detected = detected_store(env, cwd)
    repo = gitfs.locate(cwd)
    branch = gitfs.head_branch(repo) if repo is not None else None
    return Place(override or detected, detected, bool(override), repo, branch)


def default_scope(place: Place) -> list[str]:
    """The stores recall searches by default: the place's store and global."""
    return [place.store] if place.store == GLOBAL else [place.store, GLOBAL]


def belongs(place: Place, store: str) -> bool:
    """Whether `store` is this directory's: its detected identity, or the
    THATCH_STORE it is told to use. Only then do this repository's branches
    say anything about the store's branch-scoped memories."""
    return place.repo is not None and (store == place.detected or (place.overridden and store == place.store))


def local_branches(repo: gitfs.GitLocation) -> set[str]:
    """Every local branch, loose and packed, plus the branch HEAD names even
    before its first commit: an unborn branch is not a deleted one."""
    names = gitfs.local_branches(repo)
    head = gitfs.head_branch(repo)
    if head:
        names.add(head)
    return names


def orphaned(place: Place, branches: Iterable[str]) -> list[str]:
    """The branches (of memories of the place's repository) that the
    repository no longer has. A branch counts as gone only when the plain
    file reader cannot find it either (it errs towards "exists" for refs it
    cannot read, such as a reftable)."""
    if place.repo is None:
        return []
    local = local_branches(place.repo)
    return [b for b in branches if b not in local and not gitfs.branch_exists(place.repo, b)]


def top_level(repo: gitfs.GitLocation) -> str:
    """The repository's working tree (its git dir when bare), for reports."""
    return os.path.realpath(repo.worktree or repo.git_dir)
