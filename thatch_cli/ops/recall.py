"""Finding memories: hybrid (meaning and words), semantic or lexical ranking.

`search` records nothing; `recall` stamps recall telemetry on what it
returns, the signal hygiene reads to find stale memories.

Dense ranking goes through ctx.engine(): the warm daemon (embeds the query
and searches its cached matrix) or this process; both run
ranking.dense.semantic, so results are identical. The lexical ranking is an
FTS5 query on this process's connection (ranking/lexical.py), and
ranking/fusion.py merges the two. When no model loads,
every mode answers with the lexical ranking and says so. This module must
not import numpy: a warm `thatch recall` is python start-up, SQLite, one
socket round trip and rendering.
"""

from __future__ import annotations

from .. import validate
from ..context import Context
from ..errors import ModelUnavailable
from ..ranking import lexical
from ..ranking.fusion import CANDIDATES, Ranked, alone, fuse
from ..records import Memory
from .scope import search_scope

MODES = validate.MODES
SNIPPET_CHARS = 100


def snippet(memory: Memory, width: int = SNIPPET_CHARS) -> str:
    """The body on one line, cut to `width` characters."""
    text = " ".join(memory.body.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


# Plain classes rather than dataclasses: a dataclass compiles its methods
# when this module is imported, on every `thatch recall`.


class Result:
    """A memory, its score in the outcome's mode (fused, cosine or bm25), and
    where each ranker placed it."""

    __slots__ = ("memory", "ranked")

    def __init__(self, memory: Memory, ranked: Ranked) -> None:
        self.memory, self.ranked = memory, ranked

    @property
    def score(self) -> float:
        return self.ranked.score

    @property
    def match(self) -> str:
        return self.ranked.match

    def __repr__(self) -> str:
        return f"Result({self.memory.store}/{self.memory.slug}, {self.ranked!r})"

    def to_json(self, mode: str) -> dict:
        ranked = self.ranked
        return {
            **self.memory.brief(),
            "score": round(self.score, 4),
            "match": self.match,
            "scores": {
                "fused": _round(ranked.score) if mode == "hybrid" else None,
                "dense": _round(ranked.dense),
                "dense_rank": ranked.dense_rank,
                "lexical": _round(ranked.lexical),
                "lexical_rank": ranked.lexical_rank,
            },
            "snippet": snippet(self.memory),
            "content": self.memory.body,
        }


class RecallOutcome:
    __slots__ = ("query", "stores", "branch", "mode", "results", "notices")

    def __init__(self, query: str, stores: list[str], branch: str | None, mode: str,  # the mode that ranked
                 results: list[Result] | None = None, notices: list[str] | None = None) -> None:
        self.query, self.stores, self.branch, self.mode = query, stores, branch, mode
        self.results = results if results is not None else []
        self.notices = notices if notices is not None else []

    def to_json(self, results: list[dict] | None = None) -> dict:
        """The JSON document (`results` replaces the records, e.g. when a budget keeps fewer)."""
        return {
            "query": self.query,
            "stores": self.stores,
            "branch": self.branch,
            "mode": self.mode,
            "results": [r.to_json(self.mode) for r in self.results] if results is None else results,
            "notices": self.notices,
        }

    def __repr__(self) -> str:
        return (f"RecallOutcome(query={self.query!r}, stores={self.stores!r}, branch={self.branch!r},"
                f" mode={self.mode!r}, results={self.results!r}, notices={self.notices!r})")


def search(
    ctx: Context,
    query: str,
    *,
    store: str | None = None,
    all_stores: bool = False,
    branch: str | None = None,
    limit: int = 10,
    include_archived: bool = False,
    mode: str = "hybrid",
) -> RecallOutcome:
    query = validate.query(query)
    limit = validate.limit(limit)
    mode = validate.mode(mode)
    stores = search_scope(ctx, store, all_stores)
    branch = validate.branch(branch) if branch is not None else ctx.current_branch()
    db = ctx.db()
    outcome = RecallOutcome(query=query, stores=stores, branch=branch, mode=mode)
    depth = max(limit, CANDIDATES) if mode == "hybrid" else limit
    keywords: list = []  # [hits, query weight] once the keyword ranking ran

    def keyword_ranking() -> None:
        keywords[:] = lexical.rank(db, stores, query, branch=branch, include_archived=include_archived,
                                   limit=depth, weigh=mode == "hybrid")

    dense, lowest = [], None
    if mode != "lexical":
        try:
            # The keyword ranking runs while the daemon embeds the query.
            dense, lowest = _semantic(ctx, outcome, depth, include_archived,
                                      keyword_ranking if mode == "hybrid" else None)
        except ModelUnavailable as exc:
            outcome.mode = "lexical"
            outcome.notices.append(f"semantic search unavailable ({exc.message}); showing keyword matches")
    if outcome.mode != "semantic" and not keywords:
        keyword_ranking()
    keyword_hits = keywords[0] if keywords else []
    if outcome.mode == "hybrid":
        ranked = fuse(dense, lowest, keyword_hits, keywords[1])
    else:
        ranked = alone(dense, "semantic") if outcome.mode == "semantic" else alone(keyword_hits, "lexical")
    ranked = ranked[:limit]
    rows = db.get_many(r.key for r in ranked)
    outcome.results = [Result(rows[r.key], r) for r in ranked if r.key in rows]
    return outcome


def _semantic(ctx: Context, outcome: RecallOutcome, depth: int, include_archived: bool, meanwhile):
    answer = ctx.engine().search(
        outcome.stores,
        query=outcome.query,
        branch=outcome.branch,
        include_archived=include_archived,
        limit=depth,
        inventory=True,
        meanwhile=meanwhile,
    )
    if answer.unranked:
        unranked = answer.unranked
        outcome.notices.append(
            f"{unranked} memor{'y has' if unranked == 1 else 'ies have'} no vector from {answer.model}"
            + (" and can match by keywords only" if outcome.mode == "hybrid" else "")
            + "; run 'thatch reindex' to include them"
        )
    return answer.hits, answer.floor


# How long a recall queues behind another writer to stamp its telemetry
# before giving up on the stamps (never on the results).
STAMP_WAIT_S = 0.5


def recall(ctx: Context, query: str, **options) -> RecallOutcome:
    """search(), then count the results as recalled. Results never depend on
    the stamps: when they cannot be written (another writer holds the lock,
    a read-only file or mount) they are skipped and a notice says so."""
    import sqlite3

    from ..errors import DatabaseError

    outcome = search(ctx, query, **options)
    db = ctx.db()
    try:
        db.stamp_recalled([r.memory.key for r in outcome.results], ctx.now(), wait=STAMP_WAIT_S)
    except DatabaseError:
        outcome.notices.append("recall counts not updated: the database is read-only")
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "locked" in text or "busy" in text:
            outcome.notices.append("recall counts not updated: the database is locked by another process")
        elif "readonly" in text or "read-only" in text:
            outcome.notices.append("recall counts not updated: the database is read-only")
        else:
            raise
    return outcome
