"""Near-duplicate memories: finding them (clusters of similar pairs, from
stored vectors only) and recording verdicts on pairs so they are not
reported again. Nothing is ever deleted here.

numpy is imported only by `near_duplicates`, the one function that
compares vectors (the block-wise scan itself is ranking/pairscan.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..memory.records import Memory
from ..storage import maintenance
from ..storage.memories import MemoryDB
from ..storage.vectors import vector_rows
from ..support import validate
from ..support.errors import InvalidInput, NotFound
from ..support.settings import DUPLICATE_THRESHOLD
from .context import Context
from .scope import lookup, target

if TYPE_CHECKING:
    from ..calibration import Calibration
    from ..ranking.pairscan import PairScan

DEFAULT_PAIR_LIMIT = 200
VERDICTS = validate.VERDICTS
DISTINCT = validate.DISTINCT
# Scores per block of the pairwise product: ~50 MB peak when every pair passes.
_BLOCK_CELLS = 1_000_000


@dataclass(frozen=True)
class DuplicatePair:
    a: Memory
    b: Memory
    score: float


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
    calibrated: bool = True  # scores on the calibrated scale (False: raw cosines, the model never measured)

    @property
    def truncated(self) -> bool:
        return self.pair_count > len(self.pairs)


@dataclass
class DuplicateReport:
    store: str
    threshold: float
    model: str  # the configured model (THATCH_MODEL); only its vectors are compared
    limit: int
    scan: DuplicateScan

    def to_json(self) -> dict:
        scan = self.scan
        return {
            "store": self.store,
            "threshold": self.threshold,
            "model": self.model,
            "limit": self.limit,
            "compared": scan.compared,
            "skipped_other_model": scan.skipped_other_model,
            "without_vector": scan.without_vector,
            "calibrated": scan.calibrated,
            "pair_count": scan.pair_count,
            "cluster_count": scan.cluster_count,
            "truncated": scan.truncated,
            "clusters": [{
                "size": len(c.members),
                "best_score": round(c.best_score, 4),
                "pair_count": c.pair_count,
                "members": [_ref(m) for m in c.members],
                "pairs": [{"a": _ref(p.a), "b": _ref(p.b), "score": round(p.score, 4)} for p in c.pairs],
            } for c in scan.clusters],
        }


@dataclass
class Verdict:
    store: str
    a: Memory
    b: Memory
    status: str
    checked_at: str
    previous: str | None

    def to_json(self) -> dict:
        return {"store": self.store, "status": self.status, "checked_at": self.checked_at,
                "previous": self.previous, "a": self.a.brief(), "b": self.b.brief()}


@dataclass
class Verdicts:
    store: str
    rows: list[dict]

    def to_json(self) -> dict:
        return {"store": self.store, "verdicts": self.rows}


def _ref(memory: Memory) -> dict:
    return {"slug": memory.slug, "label": memory.label}


# -- finding near-duplicates -----------------------------------------------------


def near_duplicates(db: MemoryDB, store: str, *, threshold: float = DUPLICATE_THRESHOLD,
                    limit: int = DEFAULT_PAIR_LIMIT, space: str | None = None,
                    calibration: Calibration | None = None) -> DuplicateScan:
    """Pairs of live memories whose stored vectors score >= threshold,
    grouped into clusters (connected components of the pair graph). Scores
    and threshold are on `calibration`'s scale (its "passage" curve; raw
    cosines without one).

    Vectors are compared only within one embedding space and width (a model
    change leaves old rows comparable to each other, never to new ones);
    with `space`, only that space is compared and the rest is counted as
    skipped. Pairs with any recorded verdict are left out. Only the best
    `limit` pairs are kept, but counts and cluster memberships cover every
    pair. No model is loaded.
    """
    import numpy as np

    from ..model.embeddings import model_space, space_label
    from ..ranking.dense import finite_rows, normalise
    from ..ranking.pairscan import scan

    threshold = validate.threshold(threshold)
    limit = validate.limit(limit, validate.MAX_PAIR_LIMIT)
    to_scale = (lambda cosine: calibration.score("passage", cosine)) if calibration is not None else float
    cut = calibration.cosine("passage", threshold) if calibration is not None else threshold
    live = {m.slug: m for m in db.list([store], archived=False)}
    groups: dict[tuple[str, int], list[tuple[str, bytes]]] = {}
    for slug, _branch, archived, blob, model, _values in vector_rows(db, store):
        if archived or slug not in live or not blob or len(blob) % 4 or not finite_rows([blob], len(blob) // 4)[0]:
            continue
        groups.setdefault((model_space(model) or "?", len(blob) // 4), []).append((slug, blob))
    skipped = sum(len(groups.pop(key)) for key in list(groups) if space is not None and key[0] != space)
    decided = [(a, b) for a, b, _status, _at in maintenance.verdicts(db, store)]
    scans: list[tuple[list[str], PairScan]] = []
    ranked: list[tuple[DuplicatePair, int, int]] = []  # (pair, index in scans, component)
    for (_space, dim), rows in sorted(groups.items()):
        slugs = [slug for slug, _ in rows]
        index = {slug: i for i, slug in enumerate(slugs)}
        skip = np.array([sorted((index[a], index[b])) for a, b in decided if a in index and b in index],
                        dtype=np.intp).reshape(-1, 2)
        matrix = normalise(np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), dim))
        found = scan(matrix, cut, limit=limit, block_cells=_BLOCK_CELLS, skip=(skip[:, 0], skip[:, 1]))
        owner = {row: c for c, component in enumerate(found.components) for row in component.rows}
        for i, j, score in found.pairs:
            a, b = sorted((slugs[i], slugs[j]))
            ranked.append((DuplicatePair(live[a], live[b], min(1.0, to_scale(score))), len(scans), owner[i]))
        scans.append((slugs, found))
    # Each space's scan kept its best `limit`; keep the best `limit` of all.
    ranked.sort(key=lambda item: (-round(item[0].score, 6), item[0].a.slug, item[0].b.slug))
    del ranked[limit:]
    compared = sum(len(rows) for rows in groups.values())
    return DuplicateScan(
        pairs=[pair for pair, _, _ in ranked],
        pair_count=sum(found.pair_count for _, found in scans),
        clusters=_clusters(ranked, scans, live, to_scale),
        cluster_count=sum(len(found.components) for _, found in scans),
        compared=compared,
        skipped_other_model=skipped,
        without_vector=len(live) - compared - skipped,
        spaces=[f"{space_label(space)}/{dim}" for space, dim in sorted(groups)],
        calibrated=calibration is not None and calibration.measured,
    )


def _clusters(ranked: list[tuple[DuplicatePair, int, int]], scans: list[tuple[list[str], "PairScan"]],
              live: dict[str, Memory], to_scale) -> list[DuplicateCluster]:
    """The clusters that hold a reported pair, each with every member."""
    shown: dict[tuple[int, int], list[DuplicatePair]] = {}
    for pair, group, component in ranked:
        shown.setdefault((group, component), []).append(pair)
    clusters = []
    for (group, component), pairs in shown.items():
        slugs, found = scans[group]
        part = found.components[component]
        clusters.append(DuplicateCluster([live[slugs[row]] for row in part.rows], pairs, part.pair_count,
                                         min(1.0, to_scale(part.best))))
    clusters.sort(key=lambda c: (-round(c.best_score, 6), c.members[0].slug))
    return clusters


def duplicates(ctx: Context, store: str | None = None, *, threshold: float | None = None,
               limit: int = DEFAULT_PAIR_LIMIT) -> DuplicateReport:
    """Clusters of near-duplicate live memories among the vectors of the
    configured model (known by name from the settings; not loaded unless
    its calibration was never measured on this machine). `threshold`
    defaults to the duplicates.threshold setting, on the calibrated scale."""
    name = target(ctx, store)
    configured = ctx.setting("duplicates.threshold")
    threshold = configured if threshold is None else threshold
    model, space, calibration = compared_space(ctx)
    scan = near_duplicates(ctx.db(), name, threshold=threshold, limit=limit, space=space, calibration=calibration)
    if threshold == configured:  # the count the reminder shows is the configured cut-off's
        remember_count(ctx, name, scan)
    return DuplicateReport(name, threshold, model, limit, scan)


def compared_space(ctx: Context) -> tuple[str, str, Calibration]:
    """(model identity, embedding space, calibration) of the configured
    model: the one whose vectors near-duplicate scans compare. The
    calibration comes from the cache; a model never measured here is
    measured now (through the engine, which loads it), and one that cannot
    load leaves raw cosines (calibration.measured False)."""
    from .. import calibration
    from ..model.embeddings import model_space
    from ..support.errors import ModelUnavailable

    model = ctx.embedder().name  # the identity only: the model itself loads on first use
    found = calibration.lookup(ctx.env, model)
    if found is None:
        try:
            found = ctx.engine().calibration()
        except ModelUnavailable:
            found = calibration.Calibration.identity(model)
    # `or ""`: a space of None would mean "compare every space".
    return model, model_space(model) or "", found


def remember_count(ctx: Context, store: str, scan: DuplicateScan) -> None:
    """Leave the pair count for the session-start reminder (ops/pair_counts.py)."""
    from . import pair_counts

    pair_counts.record(ctx.env, ctx.db_path, store, ctx.db().store_version(store), scan.pair_count, ctx.now())


# -- verdicts ----------------------------------------------------------------------


def mark(ctx: Context, label_a: str, label_b: str, status: str, *, store: str | None = None) -> Verdict:
    """Record a verdict (duplicate, supplement, contradiction, unrelated) on
    a pair, so neither `duplicates` nor hygiene reports it again until one
    of the two memories is overwritten or forgotten."""
    return _record(ctx, label_a, label_b, validate.status(status), store)


def keep_both(ctx: Context, label_a: str, label_b: str, *, store: str | None = None) -> Verdict:
    """Record that two memories are distinct, both worth keeping."""
    return _record(ctx, label_a, label_b, DISTINCT, store)


def _record(ctx: Context, label_a: str, label_b: str, status: str, store: str | None) -> Verdict:
    """Labels resolve like `show` (detected store, then global) unless --store."""
    if store is not None:
        store = validate.store(store)
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
    if a.slug == b.slug:
        raise InvalidInput("a memory cannot be a duplicate of itself; name two different memories")
    now = ctx.now()
    previous = maintenance.record_verdict(ctx.db(), a.store, a.slug, b.slug, status, now)
    first, second = sorted((a, b), key=lambda m: m.slug)
    return Verdict(a.store, first, second, status, now, previous)


def list_verdicts(ctx: Context, store: str | None = None) -> Verdicts:
    name = target(ctx, store)
    db = ctx.db()
    rows = []
    for slug_a, slug_b, status, checked_at in maintenance.verdicts(db, name):
        a, b = db.get(name, slug_a), db.get(name, slug_b)
        rows.append({
            "slug_a": slug_a,
            "label_a": a.label if a else None,
            "slug_b": slug_b,
            "label_b": b.label if b else None,
            "status": status,
            "checked_at": checked_at,
        })
    return Verdicts(name, rows)
