"""The state of one sync and of each of its rounds, typed: what the
reading, merging and writing steps (reading.py, run.py, applying.py) share,
so none of them is handed an untyped bag."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .records import Record
from .repo import SyncedRepository
from .tree import Git

if TYPE_CHECKING:
    from ..ops.context import Context
    from ..storage.memories import MemoryDB

Counts = dict[str, int]
Report = dict[str, Any]  # one entry of a JSON list of the outcome (a conflict, a held or skipped file)


def counts() -> Counts:
    return {"created": 0, "updated": 0, "deleted": 0}


class Outcome:
    """What one `thatch sync` did, as `--json` prints it."""

    def __init__(self, repo: SyncedRepository, dry_run: bool) -> None:
        self.store, self.remote, self.dry_run = repo.store, repo.remote, dry_run
        self.status = "up to date"
        self.pulled = counts()
        self.pushed = counts()
        self.conflicts: list[Report] = []
        self.held: list[Report] = []
        self.skipped: list[dict[str, str]] = []
        self.notices: list[str] = []
        self.commit: str | None = None
        self.rounds = 0
        self.unreviewed = 0

    @property
    def attention(self) -> bool:
        return bool(self.skipped or self.held)

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "remote": self.remote, "status": self.status, "dry_run": self.dry_run,
                "pulled": self.pulled, "pushed": self.pushed, "conflicts": self.conflicts, "held": self.held,
                "skipped": self.skipped, "unreviewed": self.unreviewed, "commit": self.commit,
                "rounds": self.rounds, "notices": self.notices}


# A cached memory file (reading.py): [slug, label, digest, author, stamp, renamed_to, text_key].
CacheEntry = list[Any]


@dataclass
class Shared:
    """What every round of one sync uses: the labels allowed past the
    credential check, the git time limits, the cache of files already read
    (with the blobs this sync saw, which the cache keeps, and the files it
    parsed), and what came in, to embed after the lock is released."""

    allowed: set[str]
    timeout: float
    stall: float
    cache: dict[str, CacheEntry]
    seen: set[str] = field(default_factory=set)
    written: list[tuple[str, str]] = field(default_factory=list)  # (slug, content)
    # blob id -> its record, or why it failed: read once per sync, and cached
    # (its digest computed) only when the sync saves the cache.
    parsed: dict[str, Record | str] = field(default_factory=dict)


@dataclass
class Round:
    """One fetch-merge-commit round (before its push): the remote tip it
    merges, what it will push and the purged texts."""

    ctx: Context
    git: Git
    repo: SyncedRepository
    remote_tip: str | None
    outcome: Outcome
    shared: Shared
    pushed: Counts = field(default_factory=counts)
    purged: set[str] = field(default_factory=set)

    @property
    def db(self) -> MemoryDB:
        return self.ctx.db()
