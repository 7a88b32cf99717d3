"""Finding memories by meaning, with a lexical fallback when no model loads.

`search` records nothing; `recall` stamps recall telemetry on what it
returns, the signal hygiene reads to find stale memories.

Ranking goes through ctx.engine(): the warm daemon (embeds the query and
searches its cached matrix) or this process; both run search.semantic, so
results are identical. This module must not import numpy: a warm
`thatch recall` is python start-up, SQLite, one socket round trip and
rendering.
"""

from __future__ import annotations

from .context import Context
from .errors import InvalidInput, ModelUnavailable
from .models import Hit, Memory
from .scope import search_stores

MAX_LIMIT = 1000


# Plain classes rather than dataclasses: a dataclass compiles its methods
# when this module is imported, on every `thatch recall`.


class Result:
    __slots__ = ("memory", "score", "match")

    def __init__(self, memory: Memory, score: float, match: str) -> None:
        self.memory, self.score, self.match = memory, score, match

    def __repr__(self) -> str:
        return f"Result({self.memory.store}/{self.memory.slug}, score={self.score!r}, match={self.match!r})"


class RecallOutcome:
    __slots__ = ("query", "stores", "branch", "mode", "results", "notices")

    def __init__(self, query: str, stores: list[str], branch: str | None, mode: str,  # mode: semantic/lexical
                 results: list[Result] | None = None, notices: list[str] | None = None) -> None:
        self.query, self.stores, self.branch, self.mode = query, stores, branch, mode
        self.results = results if results is not None else []
        self.notices = notices if notices is not None else []

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
) -> RecallOutcome:
    if not query.strip():
        raise InvalidInput("query is empty")
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    stores = search_stores(ctx, store, all_stores)
    branch = branch if branch is not None else ctx.current_branch()
    db = ctx.db()
    outcome = RecallOutcome(query=query, stores=stores, branch=branch, mode="semantic")
    try:
        hits = _semantic(ctx, outcome, limit, include_archived)
    except ModelUnavailable as exc:
        outcome.mode = "lexical"
        outcome.notices.append(f"semantic search unavailable ({exc.message}); showing keyword matches")
        hits = db.lexical(stores, query, branch=branch, include_archived=include_archived, limit=limit)
    rows = db.get_many(h.key for h in hits)
    outcome.results = [Result(rows[h.key], h.score, h.match) for h in hits if h.key in rows]
    return outcome


def _semantic(ctx: Context, outcome: RecallOutcome, limit: int, include_archived: bool) -> list[Hit]:
    answer = ctx.engine().search(
        outcome.stores,
        query=outcome.query,
        branch=outcome.branch,
        include_archived=include_archived,
        limit=limit,
        inventory=True,
    )
    if answer.unranked:
        unranked = answer.unranked
        outcome.notices.append(
            f"{unranked} memor{'y has' if unranked == 1 else 'ies have'} no vector from {answer.model};"
            " run 'thatch reindex' to include them"
        )
    return answer.hits


def recall(ctx: Context, query: str, **options) -> RecallOutcome:
    outcome = search(ctx, query, **options)
    ctx.db().stamp_recalled([r.memory.key for r in outcome.results], ctx.now())
    return outcome
