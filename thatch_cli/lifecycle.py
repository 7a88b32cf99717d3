"""Store maintenance on the database: near-duplicate pairs, stale memories,
branch-scoped memories, moving and archiving them, dedup verdicts.

Every function takes a `MemoryDB` and works on `db.conn`; none knows about
the command line, the current directory or git. numpy is imported only by
`near_duplicates`, the one function that compares vectors (the block-wise
scan itself is pairscan.py).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Sequence

from .clock import parse_ts
from .embeddings import model_space
from .errors import InvalidInput
from .models import Memory
from .remember import DUPLICATE_THRESHOLD
from .store import MemoryDB

if TYPE_CHECKING:
    from .pairscan import PairScan

DEFAULT_PAIR_LIMIT = 200
MAX_PAIR_LIMIT = 10_000
DEFAULT_STALE_DAYS = 90
# Verdicts `dedup mark` records: the original thatch's vocabulary.
VERDICTS = ("duplicate", "supplement", "contradiction", "unrelated")
DISTINCT = "distinct"  # the verdict `dedup keep` records
# Scores per block of the pairwise product: ~50 MB peak when every pair passes.
_BLOCK_CELLS = 1_000_000
MAX_BRANCH_CHARS = 250


@dataclass(frozen=True)
class DuplicatePair:
    a: Memory
    b: Memory
    score: float


@dataclass(frozen=True)
class StaleMemory:
    memory: Memory
    last_activity: str  # the newest of updated_at and last_recalled_at, as stored
    idle_days: int


@dataclass(frozen=True)
class DuplicateCluster:
    members: list[Memory]  # every member, by slug
    pairs: list[DuplicatePair]  # its pairs among the reported ones, best first
    pair_count: int  # all its pairs, reported or not
    best_score: float


@dataclass(frozen=True)
class DuplicateScan:
    pairs: list[DuplicatePair]  # the best `limit` pairs, best first
    pair_count: int  # every pair at or above the threshold
    clusters: list[DuplicateCluster]  # the clusters holding a reported pair, best first
    cluster_count: int  # every cluster
    compared: int  # live memories that had a comparable vector
    skipped_other_model: int  # live memories with a vector of a space not compared
    without_vector: int  # live memories with no (usable) vector
    spaces: list[str]  # "space/dim" groups compared separately

    @property
    def truncated(self) -> bool:
        return self.pair_count > len(self.pairs)


def check_branch_name(name: str, option: str = "branch") -> str:
    value = (name or "").strip()
    if not value:
        raise InvalidInput(f"{option} name is empty")
    if len(value) > MAX_BRANCH_CHARS or any(ord(ch) < 32 for ch in value):
        raise InvalidInput(f"invalid {option} name {value[:40]!r}")
    return value


# -- reading ---------------------------------------------------------------------


def live_memories(db: MemoryDB, store: str) -> list[Memory]:
    return db.list([store], archived=False)


def verdicts(db: MemoryDB, store: str) -> list[tuple[str, str, str, str]]:
    """(slug_a, slug_b, status, checked_at) of every recorded verdict, slugs sorted."""
    return db.conn.execute(
        "SELECT slug_a, slug_b, status, checked_at FROM dedup_pairs WHERE store = ? ORDER BY slug_a, slug_b",
        (store,),
    ).fetchall()


def check_threshold(value: float) -> float:
    if not 0 < value <= 1:  # NaN fails too
        raise InvalidInput(f"--threshold must be above 0 and at most 1, got {value}")
    return value


def check_pair_limit(value: int) -> int:
    if not 1 <= value <= MAX_PAIR_LIMIT:
        raise InvalidInput(f"--limit must be between 1 and {MAX_PAIR_LIMIT}, got {value}")
    return value


def check_status(status: str) -> str:
    value = (status or "").strip().lower()
    if value not in VERDICTS:
        raise InvalidInput(f"unknown status {status!r}; use one of {', '.join(VERDICTS)}")
    return value


def near_duplicates(db: MemoryDB, store: str, *, threshold: float = DUPLICATE_THRESHOLD,
                    limit: int = DEFAULT_PAIR_LIMIT, space: str | None = None) -> DuplicateScan:
    """Pairs of live memories whose stored vectors have cosine >= threshold,
    grouped into clusters (connected components of the pair graph).

    Vectors are compared only within one embedding space and width (a model
    change leaves old rows comparable to each other, never to new ones);
    with `space`, only that space is compared and the rest is counted as
    skipped. Pairs with any recorded verdict are left out. Only the best
    `limit` pairs are kept, but counts and cluster memberships cover every
    pair. No model is loaded.
    """
    import numpy as np

    from .pairscan import scan
    from .vectors import normalise

    threshold, limit = check_threshold(threshold), check_pair_limit(limit)
    live = {m.slug: m for m in live_memories(db, store)}
    groups: dict[tuple[str, int], list[tuple[str, bytes]]] = {}
    for slug, _branch, archived, blob, model in db.vector_rows(store):
        if archived or slug not in live or not blob or len(blob) % 4:
            continue
        groups.setdefault((model_space(model) or "?", len(blob) // 4), []).append((slug, blob))
    skipped = sum(len(groups.pop(key)) for key in list(groups) if space is not None and key[0] != space)
    decided = [(a, b) for a, b, _status, _at in verdicts(db, store)]
    scans: list[tuple[list[str], PairScan]] = []
    ranked: list[tuple[DuplicatePair, int, int]] = []  # (pair, index in scans, component)
    for (_space, dim), rows in sorted(groups.items()):
        slugs = [slug for slug, _ in rows]
        index = {slug: i for i, slug in enumerate(slugs)}
        skip = np.array([sorted((index[a], index[b])) for a, b in decided if a in index and b in index],
                        dtype=np.intp).reshape(-1, 2)
        matrix = normalise(np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), dim))
        found = scan(matrix, threshold, limit=limit, block_cells=_BLOCK_CELLS, skip=(skip[:, 0], skip[:, 1]))
        owner = {row: c for c, component in enumerate(found.components) for row in component.rows}
        for i, j, score in found.pairs:
            a, b = sorted((slugs[i], slugs[j]))
            ranked.append((DuplicatePair(live[a], live[b], min(1.0, score)), len(scans), owner[i]))
        scans.append((slugs, found))
    # Each space's scan kept its best `limit`; keep the best `limit` of all.
    ranked.sort(key=lambda item: (-round(item[0].score, 6), item[0].a.slug, item[0].b.slug))
    del ranked[limit:]
    compared = sum(len(rows) for rows in groups.values())
    return DuplicateScan(
        pairs=[pair for pair, _, _ in ranked],
        pair_count=sum(found.pair_count for _, found in scans),
        clusters=_clusters(ranked, scans, live),
        cluster_count=sum(len(found.components) for _, found in scans),
        compared=compared,
        skipped_other_model=skipped,
        without_vector=len(live) - compared - skipped,
        spaces=[f"{space}/{dim}" for space, dim in sorted(groups)],
    )


def _clusters(ranked: list[tuple[DuplicatePair, int, int]], scans: list[tuple[list[str], PairScan]],
              live: dict[str, Memory]) -> list[DuplicateCluster]:
    """The clusters that hold a reported pair, each with every member."""
    shown: dict[tuple[int, int], list[DuplicatePair]] = {}
    for pair, group, component in ranked:
        shown.setdefault((group, component), []).append(pair)
    clusters = []
    for (group, component), pairs in shown.items():
        slugs, found = scans[group]
        part = found.components[component]
        clusters.append(DuplicateCluster([live[slugs[row]] for row in part.rows], pairs, part.pair_count,
                                         min(1.0, part.best)))
    clusters.sort(key=lambda c: (-round(c.best_score, 6), c.members[0].slug))
    return clusters


def stale_memories(db: MemoryDB, store: str, now: datetime, days: int) -> list[StaleMemory]:
    """Live memories neither updated nor recalled for `days` days, oldest first.
    A memory whose timestamps cannot be read is not called stale."""
    if days < 0:
        raise InvalidInput(f"--stale-days must be 0 or more, got {days}")
    cutoff = now - timedelta(days=days)
    found: list[tuple[datetime, StaleMemory]] = []
    for memory in live_memories(db, store):
        stamps = [(parse_ts(text), text) for text in (memory.updated_at, memory.last_recalled_at) if text]
        stamps = [(moment, text) for moment, text in stamps if moment is not None]
        if not stamps:
            continue
        latest, text = max(stamps, key=lambda s: s[0])
        if latest <= cutoff:
            found.append((latest, StaleMemory(memory, text, max(0, (now - latest).days))))
    found.sort(key=lambda item: (item[0], item[1].memory.slug))
    return [stale for _, stale in found]


def branch_memories(db: MemoryDB, store: str, *, archived: bool | None = False) -> dict[str, list[Memory]]:
    """Branch-scoped memories of a store grouped by branch (live only by default)."""
    grouped: dict[str, list[Memory]] = {}
    for memory in db.list([store], archived=archived):
        if memory.branch:
            grouped.setdefault(memory.branch, []).append(memory)
    return dict(sorted(grouped.items()))


def branch_deletions(db: MemoryDB, store: str) -> dict[str, str]:
    """branch -> when it was last seen deleted, from the git hooks' record
    (table thatch_cli_deleted_branches); empty when that table is absent."""
    try:
        rows = db.conn.execute(
            "SELECT branch, max(deleted_at) FROM thatch_cli_deleted_branches WHERE store = ? GROUP BY branch",
            (store,),
        ).fetchall()
    except sqlite3.OperationalError:
        return {}
    return {branch: at for branch, at in rows if branch and at}


# -- writing ---------------------------------------------------------------------


def _scoped(db: MemoryDB, store: str, branch: str, *, live_only: bool) -> list[Memory]:
    return sorted(db.list([store], branch=branch, archived=False if live_only else None), key=lambda m: m.slug)


def rescope(db: MemoryDB, store: str, old: str, new: str | None) -> list[Memory]:
    """Move every memory (live and archived) scoped to branch `old` to branch
    `new`, or to unscoped when `new` is None. Returns the moved memories as
    they are now. Slugs are keyed by store, not branch, so nothing collides;
    updated_at is left alone (the content did not change)."""
    old = check_branch_name(old, "--from")
    if new is not None:
        new = check_branch_name(new, "--to")
        if new == old:
            raise InvalidInput("--from and --to name the same branch")
    with db.transaction() as conn:
        moved = _scoped(db, store, old, live_only=False)
        conn.execute("UPDATE entries SET branch = ? WHERE store = ? AND branch = ?", (new, store, old))
    for memory in moved:
        memory.branch = new
    return moved


def archive_branch(db: MemoryDB, store: str, branch: str) -> list[Memory]:
    """Archive every live memory scoped to `branch`; returns them (now archived)."""
    branch = check_branch_name(branch)
    with db.transaction() as conn:
        changed = _scoped(db, store, branch, live_only=True)
        conn.execute(
            "UPDATE entries SET archived = 1 WHERE store = ? AND branch = ? AND archived = 0", (store, branch)
        )
    for memory in changed:
        memory.archived = True
    return changed


def record_verdict(db: MemoryDB, store: str, slug_a: str, slug_b: str, status: str, now: str) -> str | None:
    """Record a dedup verdict for a pair (the original's dedup_mark_checked).
    Returns the verdict it replaced, if any."""
    if slug_a == slug_b:
        raise InvalidInput("a memory cannot be a duplicate of itself; name two different memories")
    with db.transaction():
        previous = db.pair_status(store, slug_a, slug_b)
        db.mark_pair(store, slug_a, slug_b, status, now)
    return previous


def branches_with_memories(db: MemoryDB, stores: Sequence[str]) -> list[str]:
    rows = db.conn.execute(
        f"SELECT DISTINCT branch FROM entries WHERE store IN ({','.join('?' * len(stores))})"
        " AND branch IS NOT NULL AND branch != '' ORDER BY branch",
        list(stores),
    )
    return [r[0] for r in rows]
