"""Finding memories by meaning, with a lexical fallback when no model loads.

`search` records nothing; `recall` stamps recall telemetry on what it
returns, the signal hygiene reads to find stale memories.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .context import Context
from .embeddings import model_space
from .errors import InvalidInput, ModelUnavailable
from .models import Hit, Memory
from .scope import search_stores

MAX_LIMIT = 1000


@dataclass
class Result:
    memory: Memory
    score: float
    match: str


@dataclass
class RecallOutcome:
    query: str
    stores: list[str]
    branch: str | None
    mode: str  # "semantic" or "lexical"
    results: list[Result] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


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
    from .search import db_loader, semantic

    embedder = ctx.embedder()
    vector = embedder.embed_query(outcome.query)
    space, dim = model_space(embedder.name) or "", int(vector.shape[-1])
    unranked = _unranked(ctx, outcome.stores, space, dim)
    if unranked:
        outcome.notices.append(
            f"{unranked} memor{'y has' if unranked == 1 else 'ies have'} no vector from {embedder.name};"
            " run 'thatch reindex' to include them"
        )
    return semantic(
        db_loader(ctx.db()),
        outcome.stores,
        vector,
        space=space,
        branch=outcome.branch,
        include_archived=include_archived,
        limit=limit,
    )


def _unranked(ctx: Context, stores: list[str], space: str, dim: int) -> int:
    return sum(
        count
        for model, length, count in ctx.db().vector_inventory(stores)
        if length != 4 * dim or model_space(model) != space
    )


def recall(ctx: Context, query: str, **options) -> RecallOutcome:
    outcome = search(ctx, query, **options)
    ctx.db().stamp_recalled([r.memory.key for r in outcome.results], ctx.now())
    return outcome
