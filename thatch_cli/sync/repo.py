"""Which repository and store `thatch sync` works on, and the lock that
keeps two syncs of one repository (a command and the git hook's background
import) from merging at once."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..location import gitfs
from ..location.scope import GLOBAL
from ..ops.context import Context
from ..support.errors import InvalidInput, NotFound, ThatchError, Unavailable
from . import gitconfig


@dataclass(frozen=True)
class Repository:
    """The repository around the working directory: its top, its git common
    directory, its own store, and the remote sync goes through (None: sync
    is not set up here)."""

    top: Path
    common_dir: Path
    store: str
    remote: str | None


@dataclass(frozen=True)
class SyncedRepository:
    """A repository where sync is set up: it has a remote."""

    top: Path
    common_dir: Path
    store: str
    remote: str


def repository(ctx: Context) -> Repository:
    """The repository around the working directory and its own store (its
    detected identity: THATCH_STORE never redirects what is shared)."""
    from ..support import validate

    location = gitfs.locate(ctx.cwd)
    if location is None:
        raise NotFound(f"{ctx.cwd} is not inside a git repository; thatch sync shares a repository's memories"
                       " through its git remote")
    top = location.worktree or location.git_dir
    store = validate.store(ctx.place().detected)
    if store == GLOBAL:
        raise InvalidInput("the global store is never shared; thatch sync shares a repository's own store")
    return Repository(Path(top), Path(location.common_dir), store, gitconfig.remote(top, ctx.env))


def synced(ctx: Context) -> SyncedRepository:
    """The repository, which must be set up for sync."""
    repo = repository(ctx)
    if repo.remote is None:
        raise NotFound("thatch sync is not set up in this repository: run 'thatch sync init' (it says who will"
                       " be able to read the memories, and asks)", store=repo.store)
    return SyncedRepository(repo.top, repo.common_dir, repo.store, repo.remote)


@contextmanager
def locked(repo: Repository | SyncedRepository, seconds: float) -> Iterator[None]:
    from ..support.files import acquire_lock

    try:
        fd = acquire_lock(repo.common_dir / "thatch-sync.lock", seconds)
    except TimeoutError:
        raise Unavailable("another thatch sync of this repository is still running; try again",
                          retryable=True) from None
    except OSError as exc:
        raise ThatchError(f"cannot lock {repo.common_dir}: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        os.close(fd)
