"""The memory database: stores, entries, dedup verdicts, full-text search.

It stores vectors it is handed and hands back the rows to compare; it knows
nothing of embedding models (the model name is just a column).
"""

from __future__ import annotations

import math
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from . import db as dbmod
from .errors import Conflict, NotFound
from .models import Hit, Memory, StoreSummary
from .query import fts_query, quote, terms

# Label counts double, content once; store and slug are not searched.
_BM25 = "bm25(entries_fts, 0, 0, 2.0, 1.0)"

_COLUMNS = (
    "store, slug, label, content, branch, confidence, archived, created_at, updated_at,"
    " recall_count, last_recalled_at, model"
)


def _memory(row: Sequence, embedding: bytes | None = None) -> Memory:
    return Memory(
        store=row[0],
        slug=row[1],
        label=row[2],
        content=row[3],
        branch=row[4] or None,
        confidence=row[5],
        archived=bool(row[6]),
        created_at=row[7],
        updated_at=row[8],
        recall_count=row[9] or 0,
        last_recalled_at=row[10],
        model=row[11],
        embedding=embedding,
    )


def _lexical_hits(rows: Iterable[Sequence]) -> list[Hit]:
    # bm25 is "smaller is better"; flip it so every score reads higher-is-better.
    return [Hit(store, slug, -score, "lexical") for store, slug, score in rows]


class MemoryDB:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @classmethod
    def open(cls, path: Path) -> "MemoryDB":
        return cls(dbmod.connect(path))

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction taken up front, so concurrent writers queue
        instead of failing half-way with SQLITE_BUSY on upgrade."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # -- stores -------------------------------------------------------------

    def ensure_store(self, name: str) -> None:
        self.conn.execute("INSERT OR IGNORE INTO stores (name) VALUES (?)", (name,))

    def store_names(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT name FROM stores ORDER BY name")]

    def store_summaries(self) -> list[StoreSummary]:
        rows = self.conn.execute(
            """SELECT s.name, count(e.slug), max(e.updated_at)
               FROM stores s LEFT JOIN entries e ON e.store = s.name
               GROUP BY s.name ORDER BY s.name"""
        )
        return [StoreSummary(name, count, last) for name, count, last in rows]

    def branch_counts(self, store: str) -> dict[str | None, int]:
        """Live memories per branch (None = unscoped) of one store."""
        rows = self.conn.execute(
            "SELECT NULLIF(branch, ''), count(*) FROM entries WHERE store = ? AND archived = 0 GROUP BY 1",
            (store,),
        )
        return {branch: count for branch, count in rows}

    def store_version(self, store: str) -> int:
        row = self.conn.execute(
            "SELECT version FROM thatch_cli_store_versions WHERE store = ?", (store,)
        ).fetchone()
        return row[0] if row else 0

    # -- reading entries -------------------------------------------------------

    def get(self, store: str, slug: str, *, with_vector: bool = False) -> Memory | None:
        extra = ", embedding" if with_vector else ""
        row = self.conn.execute(
            f"SELECT {_COLUMNS}{extra} FROM entries WHERE store = ? AND slug = ?", (store, slug)
        ).fetchone()
        if row is None:
            return None
        return _memory(row, row[12] if with_vector else None)

    def get_many(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
        found: dict[tuple[str, str], Memory] = {}
        for store, slug in keys:
            memory = self.get(store, slug)
            if memory is not None:
                found[memory.key] = memory
        return found

    def list(
        self,
        stores: Sequence[str] | None = None,
        *,
        branch: str | None = None,
        archived: bool | None = False,
    ) -> list[Memory]:
        """Memories in `stores` (all when None). `branch` keeps only that
        branch's memories; `archived` None means both live and archived."""
        where, args = [], []
        if stores is not None:
            where.append(f"store IN ({','.join('?' * len(stores))})")
            args += list(stores)
        if branch is not None:
            where.append("branch = ?")
            args.append(branch)
        if archived is not None:
            where.append("archived = ?")
            args.append(int(archived))
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM entries {clause} ORDER BY store, updated_at DESC, slug", args)
        return [_memory(r) for r in rows]

    def labels(self, stores: Sequence[str] | None = None) -> list[str]:
        if stores is None:
            rows = self.conn.execute("SELECT label FROM entries ORDER BY label")
        else:
            rows = self.conn.execute(
                f"SELECT label FROM entries WHERE store IN ({','.join('?' * len(stores))}) ORDER BY label",
                list(stores),
            )
        return [r[0] for r in rows]

    def vector_rows(self, store: str) -> list[tuple[str, str | None, int, bytes, str | None]]:
        """(slug, branch, archived, embedding, model) of every row with a vector."""
        return self.conn.execute(
            "SELECT slug, branch, archived, embedding, model FROM entries"
            " WHERE store = ? AND embedding IS NOT NULL ORDER BY slug",
            (store,),
        ).fetchall()

    def vector_inventory(self, stores: Sequence[str]) -> list[tuple[str | None, int | None, int]]:
        """(model, embedding byte length, count) groups, to spot rows a model cannot rank."""
        return self.conn.execute(
            f"SELECT model, length(embedding), count(*) FROM entries"
            f" WHERE store IN ({','.join('?' * len(stores))}) GROUP BY model, length(embedding)",
            list(stores),
        ).fetchall()

    def rows_for_reindex(self, stores: Sequence[str] | None) -> list[tuple[str, str, str, str | None, int | None]]:
        """(store, slug, content, model, embedding length) of every row."""
        clause, args = "", []
        if stores is not None:
            clause = f"WHERE store IN ({','.join('?' * len(stores))})"
            args = list(stores)
        return self.conn.execute(
            f"SELECT store, slug, content, model, length(embedding) FROM entries {clause} ORDER BY store, slug", args
        ).fetchall()

    def lexical(
        self,
        stores: Sequence[str],
        query: str,
        *,
        branch: str | None,
        include_archived: bool,
        limit: int,
    ) -> list[Hit]:
        match = fts_query(query)
        if match is None:
            return []
        # FTS5 ranks fastest alone: joining every match to entries before
        # sorting, or filtering on its UNINDEXED store column, costs 2-5x on a
        # big store with common words. So when the searched stores hold most
        # memories, take the best candidates from FTS5 alone (enough to
        # expect `limit` in scope) and check scope, branch and archive on
        # those; otherwise, or when too few survive, filter while ranking.
        share = self._share_of_index(stores)
        if share >= 0.25:
            candidates = math.ceil(4 * limit / share) + 100
            ranked = self.conn.execute(
                f"SELECT store, slug, {_BM25} AS score FROM entries_fts WHERE entries_fts MATCH ?"
                " ORDER BY score LIMIT ?", (match, candidates)).fetchall()
            # Ties go by store and slug, as below; sorting on them in SQL would
            # read both columns of every match.
            ranked.sort(key=lambda row: (row[2], row[0], row[1]))
            rows = self._in_scope(ranked, stores, branch, include_archived)[:limit]
            if len(rows) == limit or len(ranked) < candidates:  # enough, or every match was read
                return _lexical_hits(rows)
        marks = ",".join("?" * len(stores))
        archived = "" if include_archived else "AND e.archived = 0"
        rows = self.conn.execute(f"""
            SELECT f.store, f.slug, f.score FROM (
                SELECT store, slug, {_BM25} AS score FROM entries_fts
                WHERE entries_fts MATCH ? AND store IN ({marks})) AS f
            JOIN entries e ON e.store = f.store AND e.slug = f.slug
            WHERE (e.branch IS NULL OR e.branch = '' OR e.branch = ?) {archived}
            ORDER BY f.score, f.store, f.slug LIMIT ?""", [match, *stores, branch or "", limit]).fetchall()
        return _lexical_hits(rows)

    def _in_scope(self, ranked: list, stores: Sequence[str], branch: str | None, include_archived: bool) -> list:
        """The rows of `ranked` ((store, slug, ...), in order) that are live
        (or archived when asked), unscoped or on `branch`, in `stores`."""
        wanted: dict[str, list[str]] = {}
        for row in ranked:
            if row[0] in stores:
                wanted.setdefault(row[0], []).append(row[1])
        keep: set[tuple[str, str]] = set()
        archived = "" if include_archived else "AND archived = 0"
        for store, slugs in wanted.items():
            for start in range(0, len(slugs), 500):  # well under SQLite's parameter limit
                chunk = slugs[start:start + 500]
                keep.update((store, slug) for (slug,) in self.conn.execute(
                    f"SELECT slug FROM entries WHERE store = ? AND slug IN ({','.join('?' * len(chunk))})"
                    f" AND (branch IS NULL OR branch = '' OR branch = ?) {archived}",
                    [store, *chunk, branch or ""]))
        return [row for row in ranked if (row[0], row[1]) in keep]

    def _share_of_index(self, stores: Sequence[str]) -> float:
        """The share of all memories that live in `stores` (1.0 when there are none)."""
        total = self.conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        if not total:
            return 1.0
        (inside,) = self.conn.execute(
            f"SELECT count(*) FROM entries WHERE store IN ({','.join('?' * len(stores))})", list(stores)).fetchone()
        return inside / total

    def query_weight(self, query: str) -> float:
        """The summed idf of the query's terms, computed as FTS5's bm25 does
        (whole index, floor 1e-6): about the bm25 of a memory that contains
        every term once. Hybrid ranking measures a bm25 against it, so a
        match on one common word is not mistaken for a full match. A term
        no memory contains counts too, at its (maximal) idf: it is the most
        specific word of the query and nothing matched it."""
        found = terms(query)
        if not found:
            return 0.0
        total = self.conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        weight = 0.0
        for term in found:
            (count,) = self.conn.execute(
                "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?", (quote(term),)).fetchone()
            weight += max(1e-6, math.log((total - count + 0.5) / (count + 0.5)))
        return weight

    # -- writing entries -------------------------------------------------------

    def save(self, memory: Memory, *, overwrite: bool, archived: bool | None) -> Memory | None:
        """Insert `memory`, or replace the row with its slug when `overwrite`.

        Returns the row that was replaced (None for a new memory). Replacing
        keeps creation time and recall telemetry, keeps branch and confidence
        unless new ones are given, and clears the slug's dedup verdicts since
        new content may resolve or create duplicates.
        """
        with self.transaction() as conn:
            self.ensure_store(memory.store)
            existing = self.check_writable(memory.store, memory.slug, overwrite=overwrite, archived=archived)
            memory.archived = bool(archived)
            if existing is not None:
                memory.created_at = existing.created_at
                memory.recall_count = existing.recall_count
                memory.last_recalled_at = existing.last_recalled_at
                memory.branch = memory.branch if memory.branch is not None else existing.branch
                memory.confidence = memory.confidence if memory.confidence is not None else existing.confidence
                conn.execute("DELETE FROM entries WHERE store = ? AND slug = ?", memory.key)
                self._clear_dedup(memory.store, memory.slug)
            conn.execute(
                """INSERT INTO entries (slug, store, label, content, embedding, model, branch, confidence,
                       archived, created_at, updated_at, recall_count, last_recalled_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    memory.slug, memory.store, memory.label, memory.content, memory.embedding, memory.model,
                    memory.branch, memory.confidence, int(memory.archived), memory.created_at,
                    memory.updated_at, memory.recall_count, memory.last_recalled_at,
                ),
            )
        return existing

    def check_writable(self, store: str, slug: str, *, overwrite: bool, archived: bool | None) -> Memory | None:
        """The row a save would replace, or a Conflict explaining why it may not."""
        existing = self.get(store, slug)
        if existing is not None and not overwrite:
            raise Conflict(
                f"a memory labelled {existing.label!r} already exists in {store}"
                f" (slug {existing.slug}); pass --overwrite to replace it",
                store=store,
                slug=existing.slug,
                label=existing.label,
            )
        if existing is not None and existing.archived and archived is None:
            raise Conflict(
                f"{existing.label!r} in {store} is archived; pass --archived to keep it"
                " archived or --no-archived to restore it",
                store=store,
                slug=existing.slug,
            )
        return existing

    def delete(self, store: str, slug: str) -> Memory:
        with self.transaction() as conn:
            existing = self.get(store, slug)
            if existing is None:
                raise NotFound(f"no memory {slug!r} in store {store}", store=store, slug=slug)
            conn.execute("DELETE FROM entries WHERE store = ? AND slug = ?", (store, slug))
            self._clear_dedup(store, slug)
        return existing

    def set_vector(self, store: str, slug: str, content: str, embedding: bytes, model: str) -> bool:
        """Attach a vector computed from `content`; a row edited meanwhile is left alone."""
        cur = self.conn.execute(
            "UPDATE entries SET embedding = ?, model = ? WHERE store = ? AND slug = ? AND content = ?",
            (embedding, model, store, slug, content),
        )
        return cur.rowcount == 1

    def stamp_recalled(self, keys: Sequence[tuple[str, str]], now: str) -> None:
        if not keys:
            return
        with self.transaction() as conn:
            conn.executemany(
                "UPDATE entries SET recall_count = recall_count + 1, last_recalled_at = ? WHERE store = ? AND slug = ?",
                [(now, store, slug) for store, slug in keys],
            )

    # -- dedup verdicts -------------------------------------------------------

    def _clear_dedup(self, store: str, slug: str) -> None:
        self.conn.execute(
            "DELETE FROM dedup_pairs WHERE store = ? AND (slug_a = ? OR slug_b = ?)", (store, slug, slug)
        )

    def mark_pair(self, store: str, slug_a: str, slug_b: str, status: str, now: str) -> None:
        a, b = sorted((slug_a, slug_b))
        self.conn.execute(
            "INSERT OR REPLACE INTO dedup_pairs (store, slug_a, slug_b, status, checked_at) VALUES (?, ?, ?, ?, ?)",
            (store, a, b, status, now),
        )

    def pair_status(self, store: str, slug_a: str, slug_b: str) -> str | None:
        a, b = sorted((slug_a, slug_b))
        row = self.conn.execute(
            "SELECT status FROM dedup_pairs WHERE store = ? AND slug_a = ? AND slug_b = ?", (store, a, b)
        ).fetchone()
        return row[0] if row else None

