"""Where am I: the store and branch a command run in a directory works on,
the repository around it, and which branches that repository has.

The one resolver for every front door: commands (through Context), the
shell prompt, git hooks, completion and agent hooks. Standard library only
(dulwich is imported only when the identity cache misses), so hot paths can
use it.
"""

from __future__ import annotations

import os

from ..support import paths

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path
    from typing import Any

    from . import gitfs

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Any, Iterable, Mapping

GLOBAL = "global"
_UNSET = object()


class Place:
    """The store and branch of a directory, each worked out when first asked
    for: with THATCH_STORE set, a command that needs only the store never
    reads the repository (nor imports pathlib for it)."""

    __slots__ = ("_branch", "_cwd", "_detected", "_env", "_override", "_repo", "overridden")

    def __init__(self, env: Mapping[str, str], cwd: str | os.PathLike) -> None:
        self._override = (env.get("THATCH_STORE") or "").strip()
        self._env, self._cwd = env, cwd
        self._detected: str | None = None
        self._repo: Any = _UNSET
        self._branch: Any = _UNSET
        self.overridden = bool(self._override)  # THATCH_STORE is set

    @property
    def store(self) -> str:
        """THATCH_STORE when set, else the detected store."""
        return self._override or self.detected

    @property
    def repo(self) -> gitfs.GitLocation | None:
        """The repository around the directory."""
        if self._repo is _UNSET:
            from . import gitfs

            self._repo = gitfs.locate(self._cwd)
        return self._repo

    @property
    def branch(self) -> str | None:
        """HEAD's branch, unborn included; None when detached or outside a repository."""
        if self._branch is _UNSET:
            from . import gitfs

            repo = self.repo
            self._branch = gitfs.head_branch(repo) if repo is not None else None
        return self._branch

    @property
    def detected(self) -> str:
        """The repository's (or directory's) own identity."""
        if self._detected is None:
            self._detected = detected_store(self._env, self._cwd)
        return self._detected

    def __repr__(self) -> str:
        return f"Place(store={self.store!r}, branch={self.branch!r}, repo={self.repo!r})"


def detected_store(env: Mapping[str, str], cwd: str | os.PathLike) -> str:
    """The repository's identity (owner/repo, else its name, else the
    directory's), from the per-repository cache when its config is unchanged."""
    from .identity import resolve_store

    return resolve_store(cwd, paths.cache_file(env, "repos.tsv"))


def here(env: Mapping[str, str], cwd: str | os.PathLike) -> Place:
    return Place(env, cwd)


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
    from . import gitfs

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
    from . import gitfs

    local = local_branches(place.repo)
    return [b for b in branches if b not in local and not gitfs.branch_exists(place.repo, b)]


def orphaned_count(place: Place, counts: Mapping[str | None, int]) -> int:
    """How many of the place's store's memories (`counts`: branch -> memories)
    are scoped to branches its repository no longer has; 0 when the store is
    not this repository's (another store's branches say nothing about it)."""
    branches = [b for b in counts if b is not None]
    if not branches or not belongs(place, place.store):
        return 0
    gone = set(orphaned(place, branches))
    return sum(n for b, n in counts.items() if b in gone)


def top_level(repo: gitfs.GitLocation) -> str:
    """The repository's working tree (its git dir when bare), for reports."""
    return os.path.realpath(repo.worktree or repo.git_dir)


def project_dir(env: Mapping[str, str], payload: Mapping[str, Any] | None = None, cwd: str | None = None) -> Path:
    """Where a coding agent's session works: its hook payload's cwd (Claude
    Code, Codex) or first workspace root (Cursor), else the host's project
    variable (Cursor's first: Cursor sets CLAUDE_PROJECT_DIR too, as an
    alias), else here (`cwd`: the hook's own directory when a daemon runs
    it). The agent hooks and the MCP server ask this per call."""
    from pathlib import Path

    payload = payload or {}
    roots = payload.get("workspace_roots")
    candidates = [payload.get("cwd"), roots[0] if isinstance(roots, list) and roots else None,
                  env.get("CURSOR_PROJECT_DIR"), env.get("CLAUDE_PROJECT_DIR")]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate and os.path.isdir(candidate):
            return Path(candidate)
    return Path(cwd) if cwd is not None else Path.cwd()
