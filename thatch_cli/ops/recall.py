"""Finding memories: hybrid (meaning and words), semantic or lexical ranking.

Two words for two acts: `peek` ranks and records nothing; `recall` (the
CLI's `recall` and `search` both) also stamps recall telemetry on what it
returns, the signal hygiene reads to find stale memories.

Every mode scores on one 0-1 scale (ranking/fusion.py), so one relevance
floor (setting recall.floor, or `floor=`) splits the best `limit` matches
into results and weak matches. Weak matches are returned apart, for a
caller that asks to see them, and never stamped: an unrelated query
answers nothing and makes nothing look used.

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

from ..memory import values
from ..memory.filter import Filter
from ..memory.records import Memory
from ..ranking import lexical
from ..ranking.fusion import CANDIDATES, Ranked, alone, fuse
from ..support import validate
from ..support.errors import ModelUnavailable
from .context import Context
from .scope import search_scope

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: a warm recall never imports typing
if TYPE_CHECKING:
    from collections.abc import Mapping

MODES = validate.MODES
SNIPPET_CHARS = 100


def snippet(memory: Memory, width: int = SNIPPET_CHARS) -> str:
    """The body on one line, cut to `width` characters (textsafe.snippet)."""
    from ..support.textsafe import snippet as cut

    return cut(memory.body, width)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


# Plain classes rather than dataclasses: a dataclass compiles its methods
# when this module is imported, on every `thatch recall`.


class Result:
    """A memory, its score (0-1, in the outcome's mode), and where each
    ranker placed it."""

    __slots__ = ("memory", "ranked", "anchors", "drift")

    def __init__(self, memory: Memory, ranked: Ranked) -> None:
        self.memory, self.ranked = memory, ranked
        self.anchors: list[dict] = []  # ops/anchors.py row_json, each with its drift
        self.drift: list[str] = []  # one line per anchor whose code moved, changed or is gone

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
                "semantic": _round(ranked.semantic),
                "dense": _round(ranked.dense),
                "dense_rank": ranked.dense_rank,
                "lexical": _round(ranked.lexical),
                "lexical_rank": ranked.lexical_rank,
            },
            "snippet": snippet(self.memory),
            "content": self.memory.body,
            "anchors": self.anchors,
            "drift": self.drift,
        }


class RecallOutcome:
    """The results (score at or above `floor`, best first), the weak matches
    below it, and notices."""

    __slots__ = ("query", "stores", "branch", "all_branches", "mode", "floor", "results", "weak", "notices",
                 "elsewhere")

    def __init__(self, query: str, stores: list[str], branch: str | None, mode: str,  # the mode that ranked
                 floor: float = 0.0, results: list[Result] | None = None, weak: list[Result] | None = None,
                 notices: list[str] | None = None, all_branches: bool = False) -> None:
        self.query, self.stores, self.branch, self.mode, self.floor = query, stores, branch, mode, floor
        self.all_branches = all_branches
        self.results = results if results is not None else []
        self.weak = weak if weak is not None else []
        self.notices = notices if notices is not None else []
        # store -> how many matches it holds, when this search found nothing and
        # other stores match (recall() fills it; None when not looked).
        self.elsewhere: dict[str, int] | None = None

    def to_json(self, results: list[dict] | None = None, weak: list[dict] | None = None) -> dict:
        """The JSON document. `results` replaces the records (e.g. when a
        budget keeps fewer); `weak` lists weak matches, null when not asked for."""
        return {
            "query": self.query,
            "stores": self.stores,
            "branch": self.branch,
            "all_branches": self.all_branches,
            "mode": self.mode,
            "floor": self.floor,
            "results": [r.to_json(self.mode) for r in self.results] if results is None else results,
            "weak_count": len(self.weak),
            "weak": weak,
            "notices": self.notices,
            "elsewhere": self.elsewhere,
        }

    def __repr__(self) -> str:
        return (f"RecallOutcome(query={self.query!r}, stores={self.stores!r}, branch={self.branch!r},"
                f" mode={self.mode!r}, floor={self.floor!r}, results={self.results!r}, weak={self.weak!r},"
                f" notices={self.notices!r})")


def peek(
    ctx: Context,
    query: str,
    *,
    store: str | None = None,
    all_stores: bool = False,
    branch: str | None = None,
    limit: int | None = None,
    include_archived: bool = False,
    mode: str = "hybrid",
    floor: float | None = None,
    all_branches: bool = False,
    project_only: bool = False,
    files: list[str] | None = None,
    fields: Mapping[str, object] | None = None,
) -> RecallOutcome:
    """The best `limit` matches of `query` (default: setting recall.limit),
    split at `floor` (default: setting recall.floor; 0 keeps every match).
    Memories are those without a branch plus `branch`'s (default: the
    checked-out branch), or every branch's with `all_branches`. The stores
    are ops.scope.search_scope's (`project_only`: the detected store alone).
    A ranking by keywords alone (--mode lexical, or no model) gets no floor
    unless one is given: every keyword match shares a word of the query, and
    in a small store keyword scores say little (idf is near 0 when most
    memories hold a word), so a floor would hide what is all there is.
    `files` (files or directories) keeps only memories anchored to them
    (ops/anchors.py); with no query, those memories are the results.
    `fields` keeps only memories holding what it asks of filterable fields
    (memory/filter.py: pinned, ...)."""
    wanted_fields = values.filters(fields)
    if files and not query.strip():
        return _anchored_only(ctx, files, store=store, all_stores=all_stores, project_only=project_only,
                              include_archived=include_archived, fields=wanted_fields)
    query = validate.query(query)
    limit = validate.limit(limit if limit is not None else ctx.setting("recall.limit"))
    explicit_floor = floor is not None
    floor = validate.floor(floor) if floor is not None else ctx.setting("recall.floor")
    mode = validate.mode(mode)
    stores = search_scope(ctx, store, all_stores, project_only)
    validate.one_of(**{"--branch": branch is not None, "--all-branches": all_branches})
    if all_branches:
        branch = None
    else:
        branch = validate.branch(branch) if branch is not None else ctx.current_branch()
    db = ctx.db()
    outcome = RecallOutcome(query=query, stores=stores, branch=branch, mode=mode, floor=floor,
                            all_branches=all_branches)
    depth = max(limit, CANDIDATES) if mode == "hybrid" else limit
    wanted = None
    if files:
        from .anchors import anchored_to

        wanted = set(anchored_to(ctx, stores, files))
        depth = max(depth, FILE_DEPTH)
    where = Filter(stores, branch=branch, any_branch=all_branches, archived=include_archived, fields=wanted_fields)
    keywords: list = []  # [hits, query weight] once the keyword ranking ran

    def keyword_ranking() -> None:
        keywords[:] = lexical.rank(db, where, query, limit=depth, weigh=True)

    dense = []
    if mode != "lexical":
        try:
            # The keyword ranking runs while the daemon embeds the query.
            dense = _semantic(ctx, outcome, where, depth, keyword_ranking if mode == "hybrid" else None)
        except ModelUnavailable as exc:
            outcome.mode = "lexical"
            outcome.notices.append(f"semantic search unavailable ({exc.message}); showing keyword matches")
    if outcome.mode != "semantic" and not keywords:
        keyword_ranking()
    keyword_hits, weight = keywords if keywords else ([], 0.0)
    if outcome.mode == "hybrid":
        ranked = fuse(dense, keyword_hits, weight)
    else:
        ranked = alone(dense, "semantic") if outcome.mode == "semantic" else alone(keyword_hits, "lexical", weight)
    if wanted is not None:
        ranked = [r for r in ranked if r.key in wanted]
    ranked = ranked[:limit]
    if outcome.mode == "lexical" and not explicit_floor:
        floor = outcome.floor = 0.0
    rows = db.get_many(r.key for r in ranked)
    found = [Result(rows[r.key], r) for r in ranked if r.key in rows]
    outcome.results = [r for r in found if r.score >= floor]
    outcome.weak = [r for r in found if r.score < floor]
    return outcome


# How deep `--file` ranks before keeping the anchored memories.
FILE_DEPTH = 1000


def _anchored_only(ctx: Context, files: list[str], *, store: str | None, all_stores: bool, project_only: bool,
                   include_archived: bool, fields: dict[str, object]) -> RecallOutcome:
    """Every memory anchored to `files` (holding what `fields` asks), in
    store and slug order (score 1: chosen, not ranked)."""
    from ..ranking.fusion import Ranked
    from .anchors import anchored_to

    stores = search_scope(ctx, store, all_stores, project_only)
    outcome = RecallOutcome(query="", stores=stores, branch=None, mode="anchored", all_branches=True)
    keys = anchored_to(ctx, stores, files)
    if fields:
        kept = {m.key for m in ctx.db().select(Filter(stores, any_branch=True, archived=True, fields=fields))}
        keys = [key for key in keys if key in kept]
    rows = ctx.db().get_many(keys)
    for key in sorted(rows):
        if rows[key].archived and not include_archived:
            continue
        ranked = Ranked(key)
        ranked.score = 1.0
        outcome.results.append(Result(rows[key], ranked))
    return outcome


def mark_drift(ctx: Context, outcome: RecallOutcome) -> None:
    """Give each result its anchors and, where their code drifted, a line saying so."""
    from .anchors import of

    found = outcome.results + outcome.weak
    anchored = of(ctx, [r.memory.key for r in found])
    for r in found:
        r.anchors = anchored.json(r.memory.key)
        r.drift = anchored.notes(r.memory.key)


def _semantic(ctx: Context, outcome: RecallOutcome, where: Filter, depth: int, meanwhile):
    answer = ctx.engine().search(where, query=outcome.query, limit=depth, inventory=True, meanwhile=meanwhile)
    if answer.unranked:
        unranked = answer.unranked
        outcome.notices.append(
            f"{unranked} memor{'y has' if unranked == 1 else 'ies have'} no vector from {answer.model}"
            + (" and can match by keywords only" if outcome.mode == "hybrid" else "")
            + "; run 'thatch reindex' to include them"
        )
    return answer.hits


def elsewhere(ctx: Context, query: str, outcome: RecallOutcome, options: dict) -> dict[str, int]:
    """The other stores that hold matches for `query` (same mode, floor,
    branch and limit as `outcome`), with how many each: what `--all-stores`
    would add. Nothing is stamped."""
    wider = peek(ctx, query, **{**options, "all_stores": True, "project_only": False})
    counts: dict[str, int] = {}
    for result in wider.results:
        if result.memory.store not in outcome.stores:
            counts[result.memory.store] = counts.get(result.memory.store, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


# How long a recall queues behind another writer to stamp its telemetry
# before giving up on the stamps (never on the results).
STAMP_WAIT_S = 0.5


def recall(ctx: Context, query: str, **options) -> RecallOutcome:
    """peek(), then count the results as recalled (never weak matches). Results never depend on
    the stamps: when they cannot be written (another writer holds the lock,
    a read-only file or mount) they are skipped and a notice says so."""
    import sqlite3

    from ..support.errors import DatabaseError, database_error

    outcome = peek(ctx, query, **options)
    mark_drift(ctx, outcome)
    if not outcome.results and not options.get("all_stores") and options.get("store") is None:
        outcome.elsewhere = elsewhere(ctx, query, outcome, options)
    db = ctx.db()
    try:
        db.stamp_recalled([r.memory.key for r in outcome.results], ctx.now(), wait=STAMP_WAIT_S)
    except (DatabaseError, sqlite3.OperationalError) as exc:
        err = exc if isinstance(exc, DatabaseError) else database_error(exc) or DatabaseError(str(exc))
        if err.details.get("retryable"):
            outcome.notices.append("recall counts not updated: the database is locked by another process")
        elif "read-only" in err.message:
            outcome.notices.append("recall counts not updated: the database is read-only")
        else:
            raise
    return outcome
