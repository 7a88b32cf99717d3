"""Scores on one 0-1 scale in every mode, and the hybrid ranking: one list
from the dense (cosine) and lexical (FTS5 bm25) rankings of the same query.

Each ranker's evidence is first put on 0-1, on a scale that means the same
whatever else is in the store (so a relevance floor can be applied to it):

- semantic: the cosine itself, below 0 counted as 0. It does not depend on
  the other memories: an unrelated query stays low even in a store of one.
- lexical: LEXICAL_WEIGHT x bm25 / the query's summed idf, capped: the share
  of the query's term weight a memory matches (storage/fulltext.query_weight),
  worth at most 0.8. Words alone are weaker evidence than meaning: one
  shared word ("rules", "form") would otherwise carry an off-topic query.

Hybrid combines them as independent evidence, 1 - (1 - semantic)(1 - lexical):
a memory found by one ranker keeps that ranker's score, agreement raises it,
and a score never exceeds 1. So `score` is comparable across modes and
against recall.floor.

The hybrid order adds how far a memory stands out in each ranking of this
query: the score plus a tenth of its z-scores in the two rankings, summed
(CombSUM; a z-score is a ranker's 0-1 score less the mean of its
candidates, over their spread, taken as at least MIN_SPREAD). Among
memories of similar score, the one that is unusual for this query comes
first; on LoCoMo this orders better than the score alone
(bench/locomo.py). Ordered by the z-scores alone, a store of a few
memories would put a lone weak keyword match above a clear paraphrase.
The score stays what recall shows and the floor applies to.
`python bench/relevance_floor.py` measures the scale and the floor;
`python bench/locomo.py` the ranking (better on LoCoMo than reciprocal-rank
fusion). docs/recall.md has the figures.
Pure Python: the warm recall client never imports numpy.
"""

from __future__ import annotations

from ..memory.records import Hit

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2.5 ms to import typing
if TYPE_CHECKING:
    from collections.abc import Sequence

LEXICAL_WEIGHT = 0.8
# The hybrid order: the score plus STANDING_WEIGHT x the memory's z-scores
# in the two rankings, each ranking's spread taken as at least MIN_SPREAD.
STANDING_WEIGHT = 0.1
MIN_SPREAD = 0.1
# How deep each ranking is read before fusing: a memory outside both top
# lists cannot reach the top `limit` of the fused one in practice.
CANDIDATES = 200


class Ranked:
    """One memory's place in each ranking (None where that ranker did not
    return it) and its score on the 0-1 scale."""

    __slots__ = ("key", "score", "semantic", "dense", "dense_rank", "lexical", "lexical_rank", "share")

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key
        self.score = 0.0
        self.semantic: float | None = None  # the cosine on the calibrated scale
        self.dense: float | None = None  # the model's raw cosine
        self.dense_rank: int | None = None
        self.lexical: float | None = None
        self.lexical_rank: int | None = None
        self.share = 0.0  # the share of the query's term weight it matches (0-1), 0 when no keyword matched

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
        entry.semantic, entry.dense_rank = hit.score, rank
        entry.dense = hit.cosine if hit.cosine is not None else hit.score
    for rank, hit in enumerate(lexical, 1):
        entry = entries.setdefault(hit.key, Ranked(hit.key))
        entry.lexical, entry.lexical_rank = hit.score, rank
    return entries


def semantic_score(calibrated: float) -> float:
    """A calibrated cosine (calibration/) on the 0-1 scale."""
    return min(1.0, max(0.0, calibrated))


def term_share(bm25: float, query_weight: float) -> float:
    """The share of the query's term weight a bm25 stands for: its ratio to
    `query_weight` (the bm25 of a memory holding every query term once), capped at 1."""
    return min(1.0, bm25 / query_weight) if query_weight > 0 else 0.0


def fuse(dense: Sequence[Hit], lexical: Sequence[Hit], query_weight: float) -> list[Ranked]:
    """Both rankings in one list, each memory scored 1 - (1 - semantic)(1 -
    lexical) and ordered by that score plus STANDING_WEIGHT x the sum of its
    z-scores in the two rankings."""
    entries = _ranked(dense, lexical)
    weight = _weight(lexical, query_weight)
    meaning, words = {}, {}
    for key, entry in entries.items():
        meaning[key] = semantic_score(entry.semantic) if entry.semantic is not None else None
        entry.share = term_share(entry.lexical, weight) if entry.lexical is not None else 0.0
        words[key] = LEXICAL_WEIGHT * entry.share
        entry.score = 1.0 - (1.0 - (meaning[key] or 0.0)) * (1.0 - words[key])
    # A memory one ranker did not return scores below its last candidate:
    # as that candidate (meaning), or 0 (words: it shares none with the query).
    last = min((v for v in meaning.values() if v is not None), default=0.0)
    standing = _z({k: last if v is None else v for k, v in meaning.items()})
    wording = _z(words)
    return sorted(entries.values(), key=lambda e: (
        -round(e.score + STANDING_WEIGHT * (standing[e.key] + wording[e.key]), 9), -round(e.score, 9), e.key))


def _z(values: dict) -> dict:
    """Each value's distance from their mean, in standard deviations but at
    least MIN_SPREAD: candidates that differ by less than a tenth of the 0-1
    scale say little, and in a small store one weak keyword match among
    none would otherwise stand out as much as a clear paraphrase."""
    if not values:
        return {}
    mean = sum(values.values()) / len(values)
    spread = (sum((v - mean) ** 2 for v in values.values()) / len(values)) ** 0.5
    return {key: (value - mean) / max(spread, MIN_SPREAD) for key, value in values.items()}


def alone(hits: Sequence[Hit], kind: str, query_weight: float = 0.0) -> list[Ranked]:
    """One ranking on its own, in its own order, scored on the 0-1 scale
    (`query_weight` scales a lexical ranking, as in fuse)."""
    if kind == "semantic":
        entries = _ranked(hits, [])
        for hit in hits:
            entries[hit.key].score = semantic_score(hit.score)
    else:
        entries = _ranked([], hits)
        weight = _weight(hits, query_weight)
        for hit in hits:
            entry = entries[hit.key]
            entry.share = term_share(hit.score, weight)
            entry.score = LEXICAL_WEIGHT * entry.share
    return list(entries.values())


def _weight(lexical: Sequence[Hit], query_weight: float) -> float:
    """The full-match bm25 to scale against: the query's summed idf, or when
    it is unknown the best bm25 (which then counts as a full match)."""
    if query_weight > 0:
        return query_weight
    return max((hit.score for hit in lexical), default=0.0)
