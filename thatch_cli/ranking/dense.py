"""The dense ranking: vectors as BLOBs, each store's matrix, cosine top-k.

Shared by the in-process engine and the warm daemon, so both return
identical results. Imports numpy: only paths that compare vectors load it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..memory.fields import FILTERED, SEPARATOR
from ..memory.records import Hit
from ..model.embeddings import model_space, normalise

if TYPE_CHECKING:
    from ..calibration import Calibration
    from ..memory.fields import Field
    from ..memory.filter import Filter


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")


@dataclass
class StoreVectors:
    """Every comparable vector of one store, ready for a matrix product.

    Branches are kept as integer codes (0 = unscoped) so filtering 100k rows
    per query is one vectorised comparison; each filterable field
    (memory/fields.py `filter`) as its stored value per row, a flag as bools.
    """

    store: str
    slugs: list[str]
    branch_codes: np.ndarray  # int32, one per row
    branch_ids: dict[str, int]
    archived: np.ndarray  # bool, one per row
    matrix: np.ndarray  # float32, rows L2-normalised
    values: dict[str, np.ndarray]  # filterable field -> its stored value per row

    @classmethod
    def build(cls, store: str, rows: Sequence[tuple], dim: int) -> "StoreVectors":
        """From (slug, branch, archived, blob[, {filterable field: stored value}]) rows."""
        matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype="<f4").reshape(len(rows), dim)
        finite = np.isfinite(matrix).all(axis=1)
        if not finite.all():  # one NaN row would tie every score of the store: never ranked
            rows, matrix = [r for r, ok in zip(rows, finite) if ok], matrix[finite]
        count = len(rows)
        branch_ids: dict[str, int] = {}
        codes = np.zeros(count, dtype=np.int32)
        for i, row in enumerate(rows):
            branch = row[1]
            if branch:
                codes[i] = branch_ids.setdefault(branch, len(branch_ids) + 1)
        return cls(
            store=store,
            slugs=[r[0] for r in rows],
            branch_codes=codes,
            branch_ids=branch_ids,
            archived=np.fromiter((bool(r[2]) for r in rows), dtype=bool, count=count),
            matrix=normalise(matrix),
            values={f.name: filter_column(f, [r[4].get(f.name) if len(r) > 4 else None for r in rows])
                    for f in FILTERED},
        )

    def mask(self, where: Filter) -> np.ndarray:
        """The rows `where` keeps (its exclusions aside: the ranking skips
        them after scoring, so one excluded row never costs a copy)."""
        if where.branch_only:
            keep = self.branch_codes == self.branch_ids.get(where.branch or "", -1)
        else:
            keep = np.ones(len(self.slugs), dtype=bool) if where.any_branch else self.branch_codes == 0
            if where.branch and where.branch in self.branch_ids:
                keep |= self.branch_codes == self.branch_ids[where.branch]
        if where.only_archived:
            keep &= self.archived
        elif not where.archived:
            keep &= ~self.archived
        for name, value in where.fields.items():
            column = self.values[name]
            if isinstance(value, tuple):  # a list field holding every item (storage/filters.py's instr)
                for item in value:
                    needle = SEPARATOR + item + SEPARATOR
                    keep &= np.fromiter((needle in stored for stored in column), dtype=bool, count=len(column))
            else:
                keep &= column
        return keep


def filter_column(field: Field, stored: Sequence[object]) -> np.ndarray:
    """A filterable field's stored values as the mask reads them: a flag's
    as bools, a list's as its text ("" when empty)."""
    if field.kind == "flag":
        return np.fromiter((bool(v) for v in stored), dtype=bool, count=len(stored))
    column = np.empty(len(stored), dtype=object)
    column[:] = [v if isinstance(v, str) else "" for v in stored]
    return column


def top_scores(
    indexes: Sequence[StoreVectors],
    query: np.ndarray,
    where: Filter,
    *,
    limit: int,
    min_score: float | None = None,
) -> list[tuple[str, str, float]]:
    """Best (store, slug, cosine) across indexes, ties broken by store then slug
    so results are identical however the vectors were loaded."""
    query = normalise(query.reshape(-1))
    found: list[tuple[str, str, float]] = []
    for index in indexes:
        if not index.slugs:
            continue
        keep = np.flatnonzero(index.mask(where))
        if keep.size == 0:
            continue
        # Multiply first, select after: indexing the matrix would copy it (150 MB at 100k rows).
        scores = (index.matrix @ query)[keep]
        if min_score is not None:
            passing = scores >= min_score
            keep, scores = keep[passing], scores[passing]
        take = min(limit + len(where.exclude), scores.size)
        if take <= 0:
            continue
        best = np.argpartition(-scores, take - 1)[:take] if take < scores.size else np.arange(scores.size)
        for i in best:
            slug = index.slugs[int(keep[i])]
            if (index.store, slug) not in where.exclude:
                found.append((index.store, slug, float(scores[i])))
    found.sort(key=lambda hit: (-round(hit[2], 6), hit[0], hit[1]))
    return found[:limit]


# (store, space, dim) -> the store's vectors of that space.
VectorLoader = Callable[[str, str | None, int], StoreVectors]


def comparable(model: str | None, blob: bytes, space: str | None, dim: int) -> bool:
    """Only vectors of the same embedding space and width are ever scored."""
    return len(blob) == 4 * dim and model_space(model) == space


def finite_rows(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """Which of these vectors hold only finite numbers: one NaN row would
    otherwise tie every score of the store it is ranked with."""
    if not blobs:
        return np.zeros(0, dtype=bool)
    return np.isfinite(np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dim)).all(axis=1)


def load_store_vectors(db, store: str, space: str | None, dim: int) -> StoreVectors:
    """Every rankable vector of `store` in `space` (non-finite vectors are left out)."""
    from ..storage.vectors import vector_rows

    rows = [(slug, branch, archived, blob, values) for slug, branch, archived, blob, model, values
            in vector_rows(db, store) if len(blob) == 4 * dim and model_space(model) == space]
    return StoreVectors.build(store, rows, dim)


def db_loader(db) -> VectorLoader:
    return lambda store, space, dim: load_store_vectors(db, store, space, dim)


def semantic(loader: VectorLoader, where: Filter, vector: np.ndarray, space: str | None,
             calibration: "Calibration | None" = None, kind: str = "query", *, limit: int,
             min_score: float | None = None) -> list[Hit]:
    """The best `limit` hits among the rows of `space` that `where` keeps,
    against `vector`: top_scores over what `loader` gives. Each hit's score
    is its cosine on the calibrated scale (`kind` "query" or "passage", see
    calibration/), its raw cosine kept beside it; a `min_score` is on that
    scale too."""
    if calibration is not None and min_score is not None:
        min_score = calibration.cosine(kind, min_score)
    dim = int(vector.shape[-1])
    scored = top_scores([loader(store, space, dim) for store in where.stores], vector, where, limit=limit,
                        min_score=min_score)
    score = (lambda cosine: calibration.score(kind, cosine)) if calibration is not None else float
    return [Hit(store, slug, score(cosine), "semantic", cosine) for store, slug, cosine in scored]
