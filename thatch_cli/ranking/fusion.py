"""Hybrid ranking: one list from the dense (cosine) and lexical (FTS5 bm25)
rankings of the same query.

A convex combination of the two scores, each first put on a 0-1 scale:

- dense: min-max over every memory in scope, (cos - lowest) / (best - lowest),
  so the scale is the query's own and does not depend on how a model spreads
  its cosines (bge-small crowds them into 0.6-0.9, MiniLM uses 0.0-0.8);
- lexical: bm25 / the query's summed idf, capped at 1: the share of the
  query's term weight a memory matches (storage/fulltext.query_weight). Dividing by
  the best bm25 instead would hand full marks to a memory that merely shares
  one common word with the query whenever nothing matches better.

Equal weights. Unlike reciprocal-rank fusion this keeps how far apart two
results are, not just their order, so one strong exact-identifier match is
not outvoted by a run of lukewarm semantic neighbours; `python bench/locomo.py`
measures both. Pure Python: the warm recall client never imports numpy.
"""

from __future__ import annotations

from typing import Sequence

from ..records import Hit

DENSE_WEIGHT = 0.5
# How deep each ranking is read before fusing: a memory outside both top
# lists cannot reach the top `limit` of the fused one in practice.
CANDIDATES = 200


class Ranked:
    """One memory's place in each ranking (None where that ranker did not
    return it) and its fused score."""

    __slots__ = ("key", "score", "dense", "dense_rank", "lexical", "lexical_rank")

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key
        self.score = 0.0
        self.dense: float | None = None
        self.dense_rank: int | None = None
        self.lexical: float | None = None
        self.lexical_rank: int | None = None

    @property
    def match(self) -> str:
        """Which rankers returned it: "both", "semantic" or "lexical"."""
        if self.dense_rank is not None and self.lexical_rank is not None:
            return "both"
        return "semantic" if self.dense_rank is not None else "lexical"

    def __repr__(self) -> str:
        return (f"Ranked({self.key}, score={self.score!r}, dense={self.dense!r}@{self.dense_rank},"
                f" lexical={self.lexical!r}@{self.lexical_rank})")


def _ranked(dense: Sequence[Hit], lexical: Sequence[Hit]) -> dict[tuple[str, str], Ranked]:
    entries: dict[tuple[str, str], Ranked] = {}
    for rank, hit in enumerate(dense, 1):
        entry = entries.setdefault(hit.key, Ranked(hit.key))
        entry.dense, entry.dense_rank = hit.score, rank
    for rank, hit in enumerate(lexical, 1):
        entry = entries.setdefault(hit.key, Ranked(hit.key))
        entry.lexical, entry.lexical_rank = hit.score, rank
    return entries


def _ordered(entries) -> list[Ranked]:
    return sorted(entries, key=lambda e: (-round(e.score, 9), e.key))


def fuse(dense: Sequence[Hit], lowest: float | None, lexical: Sequence[Hit], query_weight: float, *,
         dense_weight: float = DENSE_WEIGHT) -> list[Ranked]:
    """Both rankings (best first) in one list, best first. `lowest` is the
    lowest cosine among all memories in scope (the dense list's last score
    stands in when it is unknown); `query_weight` the bm25 of a full match."""
    entries = _ranked(dense, lexical)
    if dense:
        best = dense[0].score
        bottom = min(lowest if lowest is not None else dense[-1].score, dense[-1].score)
        span = best - bottom
        for hit in dense:
            entries[hit.key].score += dense_weight * ((hit.score - bottom) / span if span > 0 else 1.0)
    if lexical:
        scale = query_weight if query_weight > 0 else max(lexical[0].score, 1e-9)
        for hit in lexical:
            entries[hit.key].score += (1 - dense_weight) * min(1.0, hit.score / scale)
    return _ordered(entries.values())


def alone(hits: Sequence[Hit], kind: str) -> list[Ranked]:
    """One ranking on its own terms, in its own order: the score is the
    ranker's own (cosine or bm25)."""
    entries = _ranked(hits, []) if kind == "semantic" else _ranked([], hits)
    for hit in hits:
        entries[hit.key].score = hit.score
    return list(entries.values())
