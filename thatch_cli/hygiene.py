"""Keeping a store tidy: the hygiene report, near-duplicate clusters,
moving or archiving a branch's memories, and verdicts on similar pairs.

Library functions taking a Context; the command line (cli_hygiene.py) and
rendering (hygiene_render.py) sit on top. Nothing is ever deleted here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from . import gitfs, lifecycle, paths
from .context import Context
from .errors import InvalidInput, NotFound
from .lifecycle import (DEFAULT_PAIR_LIMIT, DEFAULT_STALE_DAYS, DISTINCT, DUPLICATE_THRESHOLD, DuplicateScan,
                        StaleMemory)
from .models import Memory
from .scope import check_store_name, lookup, target_store


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

    @property
    def memory_count(self) -> int:
        return sum(len(b.memories) for b in self.branches)


@dataclass
class HygieneReport:
    store: str
    stale_days: int
    checked_at: str
    duplicates: DuplicateScan
    stale: list[StaleMemory]
    orphans: OrphanCheck

    @property
    def clean(self) -> bool:
        return not (self.duplicates.pairs or self.stale or self.orphans.branches)


@dataclass
class DuplicateReport:
    store: str
    threshold: float
    model: str  # the configured model (THATCH_MODEL); only its vectors are compared
    limit: int
    scan: DuplicateScan


@dataclass
class BranchChange:
    store: str
    branch: str
    to: str | None  # rescope target (None = unscoped); unused by archive
    memories: list[Memory]
    branches_left: list[str]  # branches that still have memories in the store


@dataclass
class Verdict:
    store: str
    a: Memory
    b: Memory
    status: str
    checked_at: str
    previous: str | None


# -- orphaned branches -------------------------------------------------------------


def _local_branches(cwd: Path) -> tuple[Path, Path, set[str]] | None:
    """(top level, common git dir, local branch names) via dulwich, or None
    outside a repository."""
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        repo = Repo.discover(os.fspath(cwd))
    except NotGitRepository:
        return None
    try:
        # Linked worktrees report "<main>/.git/worktrees/x/../.."; normalise.
        common = Path(os.path.realpath(repo.commondir()))
        names = {os.fsdecode(name) for name in repo.refs.keys(base=b"refs/heads/")}
        top = Path(os.path.realpath(repo.path))
    finally:
        repo.close()
    return top, common, names


def _stores_of_cwd(ctx: Context) -> set[str]:
    """The stores this directory uses: THATCH_STORE (if set) and the repository's identity."""
    from .repo import resolve_store

    found = {resolve_store(ctx.cwd, paths.cache_dir(ctx.env) / "repos.json")}
    override = (ctx.env.get("THATCH_STORE") or "").strip()
    if override:
        found.add(override)
    return found


def find_orphans(ctx: Context, store: str) -> OrphanCheck:
    """Live branch-scoped memories of `store` whose branch is not a local
    branch of the repository around ctx.cwd. Skipped (not "everything is
    orphaned") outside a repository, or when the store belongs to another one."""
    scoped = lifecycle.branch_memories(ctx.db(), store)
    try:
        found = _local_branches(ctx.cwd)
    except Exception as exc:  # a corrupt repository must not sink the whole report
        return OrphanCheck(False, f"cannot read the git repository: {type(exc).__name__}: {exc}")
    if found is None:
        return OrphanCheck(False, "not inside a git repository")
    top, common, local = found
    if store not in _stores_of_cwd(ctx):
        return OrphanCheck(False, f"store {store} does not belong to the repository at {top}", str(top))
    location = gitfs.locate(ctx.cwd)
    if location is not None and os.path.realpath(location.common_dir) != str(common):
        location = None  # the two readers disagree on the repository: trust neither's absence
    if location is not None:
        head = gitfs.head_branch(location)
        if head:
            local.add(head)  # an unborn branch (no commit yet) is not a deleted one
    deleted = lifecycle.branch_deletions(ctx.db(), store)
    orphans = []
    for branch, memories in scoped.items():
        if branch in local:
            continue
        # Cross-check with the plain-file reader: a branch only counts as gone
        # when both agree (gitfs errs towards "exists" for refs it cannot read).
        if location is None or gitfs.branch_exists(location, branch):
            continue
        orphans.append(OrphanBranch(branch, memories, deleted.get(branch)))
    return OrphanCheck(True, None, str(top), orphans)


# -- the report --------------------------------------------------------------------


def report(ctx: Context, store: str | None = None, *, stale_days: int = DEFAULT_STALE_DAYS) -> HygieneReport:
    name = target_store(ctx, store)
    db = ctx.db()
    stale = lifecycle.stale_memories(db, name, ctx.clock(), stale_days)
    duplicates = lifecycle.near_duplicates(db, name)
    return HygieneReport(
        store=name,
        stale_days=stale_days,
        checked_at=ctx.now(),
        duplicates=duplicates,
        stale=stale,
        orphans=find_orphans(ctx, name),
    )


def duplicates(ctx: Context, store: str | None = None, *, threshold: float = DUPLICATE_THRESHOLD,
               limit: int = DEFAULT_PAIR_LIMIT) -> DuplicateReport:
    """Clusters of near-duplicate live memories among the vectors of the
    configured model (known by name from the environment; never loaded)."""
    from .embeddings import model_name, model_space

    name = target_store(ctx, store)
    model = model_name(ctx.env)
    # `or ""`: a space of None would mean "compare every space".
    scan = lifecycle.near_duplicates(ctx.db(), name, threshold=threshold, limit=limit,
                                     space=model_space(model) or "")
    return DuplicateReport(name, threshold, model, limit, scan)


# -- acting on a branch's memories -------------------------------------------------


def rescope(ctx: Context, old: str, new: str | None, *, store: str | None = None) -> BranchChange:
    name = target_store(ctx, store)
    db = ctx.db()
    moved = lifecycle.rescope(db, name, old, new)
    return BranchChange(name, old.strip(), new.strip() if new else None, moved,
                        lifecycle.branches_with_memories(db, [name]))


def archive(ctx: Context, branch: str, *, store: str | None = None) -> BranchChange:
    name = target_store(ctx, store)
    db = ctx.db()
    changed = lifecycle.archive_branch(db, name, branch)
    return BranchChange(name, branch.strip(), None, changed, lifecycle.branches_with_memories(db, [name]))


# -- dedup verdicts ----------------------------------------------------------------


def mark(ctx: Context, label_a: str, label_b: str, status: str, *, store: str | None = None) -> Verdict:
    """Record a verdict (duplicate, supplement, contradiction, unrelated) on
    a pair, so neither `duplicates` nor hygiene reports it again until one
    of the two memories is overwritten or forgotten."""
    return _record(ctx, label_a, label_b, lifecycle.check_status(status), store)


def keep_both(ctx: Context, label_a: str, label_b: str, *, store: str | None = None) -> Verdict:
    """Record that two memories are distinct, both worth keeping."""
    return _record(ctx, label_a, label_b, DISTINCT, store)


def _record(ctx: Context, label_a: str, label_b: str, status: str, store: str | None) -> Verdict:
    """Labels resolve like `show` (detected store, then global) unless --store."""
    if store:
        store = check_store_name(store)
    a = lookup(ctx, label_a, store)
    try:
        b = lookup(ctx, label_b, store or a.store)  # the pair's store first
    except NotFound:
        if store:
            raise
        b = lookup(ctx, label_b, None)  # found elsewhere: say so below, or not found at all
    if a.store != b.store:
        raise InvalidInput(f"{a.label!r} is in {a.store} but {b.label!r} is in {b.store};"
                           " verdicts pair memories of one store")
    now = ctx.now()
    previous = lifecycle.record_verdict(ctx.db(), a.store, a.slug, b.slug, status, now)
    first, second = sorted((a, b), key=lambda m: m.slug)
    return Verdict(a.store, first, second, status, now, previous)


def list_verdicts(ctx: Context, store: str | None = None) -> tuple[str, list[dict]]:
    name = target_store(ctx, store)
    db = ctx.db()
    rows = []
    for slug_a, slug_b, status, checked_at in lifecycle.verdicts(db, name):
        a, b = db.get(name, slug_a), db.get(name, slug_b)
        rows.append({
            "slug_a": slug_a,
            "label_a": a.label if a else None,
            "slug_b": slug_b,
            "label_b": b.label if b else None,
            "status": status,
            "checked_at": checked_at,
        })
    return name, rows
