"""Full-text ranking in SQLite FTS5: the lexical half of recall.

The MATCH expression and its terms come from ranking/lexical.py; this
module only runs them. One ranking reads everything it needs (matches,
scope, the index statistics behind the query weight) in one read
transaction, so a concurrent writer can never hand it counts from two
different moments.
"""

from __future__ import annotations

import math

from ..memory.records import Hit
from .filters import conditions
from .memories import MemoryDB, marks

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2.5 ms to import typing
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..memory.filter import Filter

# Label counts double, content once; store and slug are not searched.
_BM25 = "bm25(entries_fts, 0, 0, 2.0, 1.0)"


def _hits(rows) -> list[Hit]:
    # bm25 is "smaller is better"; flip it so every score reads higher-is-better.
    return [Hit(store, slug, -score, "lexical") for store, slug, score in rows]


def rank(db: MemoryDB, where: Filter, match: str, phrases: Sequence[str], *, limit: int,
         weigh: bool) -> tuple[list[Hit], float]:
    """The best `limit` memories `where` keeps for the MATCH expression,
    and (when `weigh` and something matched) the summed idf of its
    `phrases` (each a MATCH expression of one quoted term)."""
    with db.snapshot():
        hits = _rank(db, where, match, limit)
        weight = query_weight(db, phrases) if weigh and hits else 0.0
    return hits, weight


def _rank(db: MemoryDB, where: Filter, match: str, limit: int) -> list[Hit]:
    # FTS5 ranks fastest alone: joining every match to entries before
    # sorting, or filtering on its UNINDEXED store column, costs 2-5x on a
    # big store with common words. So when the searched stores hold most
    # memories, take the best candidates from FTS5 alone (enough to
    # expect `limit` in scope) and check scope, branch and archive on
    # those; otherwise, or when too few survive, filter while ranking.
    conn = db.conn
    stores = where.stores
    share = _share_of_index(db, stores)
    if share >= 0.25:
        candidates = math.ceil(4 * limit / share) + 100
        # Rank rowids alone, then read store and slug of the kept ones: reading
        # them for every match before the sort costs 3-6x on common words.
        ranked = conn.execute(
            f"SELECT f.store, f.slug, r.score FROM (SELECT rowid AS id, {_BM25} AS score FROM entries_fts"
            " WHERE entries_fts MATCH ? ORDER BY score LIMIT ?) AS r JOIN entries_fts AS f ON f.rowid = r.id",
            (match, candidates)).fetchall()
        # Ties go by store and slug, as below; sorting on them in SQL would
        # read both columns of every match.
        ranked.sort(key=lambda row: (row[2], row[0], row[1]))
        rows = _in_scope(db, ranked, where)[:limit]
        if len(rows) == limit or len(ranked) < candidates:  # enough, or every match was read
            return _hits(rows)
    kept, args = conditions(where, "e.")
    rows = conn.execute(f"""
        SELECT f.store, f.slug, f.score FROM (
            SELECT store, slug, {_BM25} AS score FROM entries_fts
            WHERE entries_fts MATCH ? AND store IN ({marks(stores)})) AS f
        JOIN entries e ON e.store = f.store AND e.slug = f.slug
        WHERE {kept}
        ORDER BY f.score, f.store, f.slug LIMIT ?""", [match, *stores, *args, limit]).fetchall()
    return _hits(rows)


def _in_scope(db: MemoryDB, ranked: list, where: Filter) -> list:
    """The rows of `ranked` ((store, slug, ...), in order) that `where` keeps."""
    wanted: dict[str, list[str]] = {}
    for row in ranked:
        if row[0] in where.stores:
            wanted.setdefault(row[0], []).append(row[1])
    keep: set[tuple[str, str]] = set()
    kept, args = conditions(where)
    for store, slugs in wanted.items():
        for start in range(0, len(slugs), 500):  # well under SQLite's parameter limit
            chunk = slugs[start:start + 500]
            keep.update((store, slug) for (slug,) in db.conn.execute(
                f"SELECT slug FROM entries WHERE store = ? AND slug IN ({marks(chunk)}) AND {kept}",
                [store, *chunk, *args]))
    return [row for row in ranked if (row[0], row[1]) in keep]


def _share_of_index(db: MemoryDB, stores: Sequence[str]) -> float:
    """The share of all memories that live in `stores` (1.0 when there are none)."""
    total = db.count()
    return db.count(stores) / total if total else 1.0


def query_weight(db: MemoryDB, phrases: Sequence[str]) -> float:
    """The summed idf of the query's `phrases`, computed as FTS5's bm25 does (whole index,
    floor 1e-6): about the bm25 of a memory that contains every term once.
    Hybrid ranking measures a bm25 against it, so a match on one common
    word is not mistaken for a full match. A term no memory contains counts
    too, at its (maximal) idf: it is the most specific word of the query
    and nothing matched it. Safe for any counts (call it inside one read
    transaction so they agree)."""
    if not phrases:
        return 0.0
    total = db.count()
    weight = 0.0
    for phrase in phrases:
        (count,) = db.conn.execute(
            "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?", (phrase,)).fetchone()
        count = min(max(count, 0), total)
        weight += max(1e-6, math.log((total - count + 0.5) / (count + 0.5)))
    return weight

