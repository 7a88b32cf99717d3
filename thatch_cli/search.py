"""Ranking memories against a query vector. Shared by the in-process path
and the warm daemon, so both return identical results."""

from __future__ import annotations

from typing import Callable, Sequence

from .embeddings import model_space
from .models import Hit
from .store import MemoryDB
from .vectors import StoreVectors, top_scores

VectorLoader = Callable[[str, str, int], StoreVectors]


def comparable(model: str | None, blob: bytes, space: str, dim: int) -> bool:
    """Only vectors of the same embedding space and width are ever scored."""
    return len(blob) == 4 * dim and model_space(model) == space


def load_store_vectors(db: MemoryDB, store: str, space: str, dim: int) -> StoreVectors:
    rows = [(slug, branch, archived, blob) for slug, branch, archived, blob, model in db.vector_rows(store)
            if comparable(model, blob, space, dim)]
    return StoreVectors.build(store, rows, dim)


def semantic(
    loader: VectorLoader,
    stores: Sequence[str],
    query_vector,
    *,
    space: str,
    branch: str | None,
    include_archived: bool,
    limit: int,
    exclude: set[tuple[str, str]] = frozenset(),
    min_score: float | None = None,
    any_branch: bool = False,
) -> tuple[list[Hit], float | None]:
    """The best hits, and the lowest cosine in scope (see vectors.top_scores)."""
    dim = int(query_vector.shape[-1])
    indexes = [loader(store, space, dim) for store in stores]
    scored, floor = top_scores(
        indexes,
        query_vector,
        branch=branch,
        include_archived=include_archived,
        limit=limit,
        exclude=exclude,
        min_score=min_score,
        any_branch=any_branch,
    )
    return [Hit(store, slug, score, "semantic") for store, slug, score in scored], floor


def db_loader(db: MemoryDB) -> VectorLoader:
    return lambda store, space, dim: load_store_vectors(db, store, space, dim)
