"""The hygiene report: near-duplicates, stale memories, memories scoped
to branches the repository no longer has, and memories whose anchored code
changed or is gone. It only reports; nothing is
changed or deleted here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..location import scope as location
from ..location.drift import Drift, check
from ..memory.records import Memory
from ..storage import maintenance
from ..storage.memories import MemoryDB
from ..support import validate
from ..support.clock import parse_ts
from .anchors import row_json, worktree
from .context import Context
from .dedup import DuplicateScan, compared_space, near_duplicates, remember_count
from .scope import target

DEFAULT_STALE_DAYS = 90


@dataclass(frozen=True)
class StaleMemory:
    memory: Memory
    last_activity: str  # the newest of updated_at and last_recalled_at, as stored
    idle_days: int


@dataclass
class OrphanBranch:
    branch: str
    memories: list[Memory]
    deleted_at: str | None = None  # when the git hooks saw it deleted, if they did


@dataclass
class OrphanCheck:
    checked: bool
    skipped_reason: str | None = None
    repository: str | None = None  # the repository's top level (or git dir when bare)
    branches: list[OrphanBranch] = field(default_factory=list)


@dataclass
class HygieneReport:
    store: str
    stale_days: int
    threshold: float  # the near-duplicate cut-off used (setting duplicates.threshold, calibrated scale)
    checked_at: str
    duplicates: DuplicateScan
    stale: list[StaleMemory]
    orphans: OrphanCheck
    unreadable: int = 0  # rows skipped because they cannot be decoded (named on stderr)
    # Anchors (ops/anchors.py) whose code changed or is gone: (memory, its anchor's row, the drift).
    drifted: list[tuple[Memory, tuple, Drift]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.duplicates.pairs or self.stale or self.orphans.branches or self.unreadable or self.drifted)

    def to_json(self, exit_code: int) -> dict:
        scan, orphans = self.duplicates, self.orphans
        return {
            "store": self.store,
            "clean": self.clean,
            "exit_code": exit_code,
            "checked_at": self.checked_at,
            "stale_days": self.stale_days,
            "unreadable": self.unreadable,
            "duplicates": [{"score": round(p.score, 4), "a": p.a.brief(), "b": p.b.brief()} for p in scan.pairs],
            "duplicate_check": {"threshold": self.threshold, "compared": scan.compared,
                                "skipped_other_model": scan.skipped_other_model,
                                "without_vector": scan.without_vector, "spaces": scan.spaces,
                                "calibrated": scan.calibrated,
                                "pair_count": scan.pair_count, "truncated": scan.truncated},
            "stale": [{**s.memory.brief(), "last_recalled_at": s.memory.last_recalled_at,
                       "last_activity": s.last_activity, "idle_days": s.idle_days} for s in self.stale],
            "drifted": [{**m.brief(), "anchor": row_json(row, d)} for m, row, d in self.drifted],
            "orphans": {
                "checked": orphans.checked,
                "skipped_reason": orphans.skipped_reason,
                "repository": orphans.repository,
                "branches": [{"branch": b.branch, "deleted_at": b.deleted_at,
                              "memories": [m.brief() for m in b.memories]} for b in orphans.branches],
            },
        }


def stale_memories(db: MemoryDB, store: str, now: datetime, days: int) -> list[StaleMemory]:
    """Live memories neither updated nor recalled for `days` days, oldest first.
    A memory whose timestamps cannot be read is not called stale."""
    cutoff = now - timedelta(days=validate.days(days))
    found: list[tuple[datetime, StaleMemory]] = []
    for memory in db.list([store], archived=False):
        stamps: list[tuple[datetime, str]] = []
        for text in (memory.updated_at, memory.last_recalled_at):
            moment = parse_ts(text) if text else None
            if moment is not None and text:
                stamps.append((moment, text))
        if not stamps:
            continue
        latest, text = max(stamps, key=lambda s: s[0])
        if latest <= cutoff:
            found.append((latest, StaleMemory(memory, text, max(0, (now - latest).days))))
    found.sort(key=lambda item: (item[0], item[1].memory.slug))
    return [stale for _, stale in found]


def find_orphans(ctx: Context, store: str) -> OrphanCheck:
    """Live branch-scoped memories of `store` whose branch the repository
    around ctx.cwd no longer has. Skipped (not "everything is orphaned")
    outside a repository, or when the store belongs to another one."""
    place = ctx.place()
    if place.repo is None:
        return OrphanCheck(False, "not inside a git repository")
    top = location.top_level(place.repo)
    if not location.belongs(place, store):
        return OrphanCheck(False, f"store {store} does not belong to the repository at {top}", top)
    scoped: dict[str, list[Memory]] = {}
    for memory in ctx.db().list([store], archived=False):
        if memory.branch:
            scoped.setdefault(memory.branch, []).append(memory)
    deleted = maintenance.branch_deletions(ctx.db(), store)
    gone = location.orphaned(place, sorted(scoped))
    return OrphanCheck(True, None, top, [OrphanBranch(b, scoped[b], deleted.get(b)) for b in gone])


def report(ctx: Context, store: str | None = None, *, stale_days: int = DEFAULT_STALE_DAYS) -> HygieneReport:
    name = target(ctx, store)
    db = ctx.db()
    threshold = ctx.setting("duplicates.threshold")
    # The configured model's vectors, as `thatch duplicates` compares them, so both count the same pairs.
    _, space, calibration = compared_space(ctx)
    duplicates = near_duplicates(db, name, threshold=threshold, space=space, calibration=calibration)
    remember_count(ctx, name, duplicates)
    found = HygieneReport(
        store=name,
        stale_days=stale_days,
        threshold=threshold,
        checked_at=ctx.now(),
        duplicates=duplicates,
        stale=stale_memories(db, name, ctx.clock(), stale_days),
        orphans=find_orphans(ctx, name),
    )
    found.unreadable = len(db.unreadable)
    found.drifted = drifted_anchors(ctx, name)
    return found


def drifted_anchors(ctx: Context, store: str) -> list[tuple[Memory, tuple, Drift]]:
    """The anchors of `store`'s live memories whose code changed or is gone,
    by label (none outside a checkout, where nothing can be compared)."""
    from ..storage import anchors

    tree = worktree(ctx)
    if tree is None:
        return []
    rows = anchors.in_stores(ctx.db(), [store])
    found = ctx.db().get_many(rows)
    drifted = []
    for key in sorted(rows, key=lambda k: found[k].label if k in found else k[1]):
        for row in rows[key]:
            drift = check(tree, row)
            if drift.doubtful and key in found:
                drifted.append((found[key], row, drift))
    return drifted
