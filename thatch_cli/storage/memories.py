"""The memory database: stores and entries, read and written.

`MemoryDB` stores vectors it is handed and hands rows back; it knows nothing
of embedding models (the model name is just a column). Full-text search,
vector rows, maintenance and bulk transfer live beside it in this package,
each taking a `MemoryDB`; no module outside `storage/` writes SQL.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

from ..errors import Conflict, DatabaseError, NotFound
from ..records import Memory, StoreSummary
from . import schema

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from typing import Any

COLUMNS = (
    "store, slug, label, content, branch, confidence, archived, created_at, updated_at,"
    " recall_count, last_recalled_at, model"
)


def memory_from_row(row: Sequence, embedding: bytes | None = None) -> Memory:
    """A Memory from a row selected as COLUMNS."""
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


def marks(values: Sequence) -> str:
    """`?, ?, ?` for an IN list of len(values)."""
    return ",".join("?" * len(values))


class MemoryDB:
    def __init__(self, conn: sqlite3.Connection, path: str | os.PathLike | None = None, *, read_only: bool = False,
                 history_keep: int | Callable[[], int] | None = None) -> None:
        self.conn = conn
        self.path = path
        # Opened read-only (a read-only file or mount): reads work, writes fail clearly.
        self.read_only = read_only
        # Versions of each memory to keep (None: leave the stored setting; a
        # callable is asked only then, so a read never depends on it),
        # recorded by the first write transaction that sees it differ.
        self.history_keep = history_keep

    @classmethod
    def open(cls, path: str | os.PathLike, *, create_parent: bool = True,
             history_keep: int | Callable[[], int] | None = None) -> MemoryDB:
        """Open (creating or upgrading) the database at `path`; its directory
        is created only with `create_parent`. A file this process cannot write
        opens read-only."""
        conn, read_only = schema.open_database(path, create_parent=create_parent)
        return cls(conn, path, read_only=read_only, history_keep=history_keep)

    @classmethod
    def open_existing(cls, path: str | os.PathLike) -> MemoryDB:
        """Open a thatch database that already exists at this schema; create and migrate nothing."""
        return cls(schema.connect_existing(path), path)

    def close(self) -> None:
        self.conn.close()

    def set_lock_wait(self, seconds: float) -> None:
        """How long a write waits for another writer's lock before failing
        with "database is locked" (a long-lived server keeps agents from
        hanging on a stuck writer)."""
        self.conn.execute(f"PRAGMA busy_timeout = {max(0, int(seconds * 1000))}")

    @contextmanager
    def waiting_at_most(self, seconds: float | None) -> Iterator[None]:
        """Within the block, a write waits at most `seconds` for another
        writer's lock (None: as usual); for writes a command can skip."""
        if seconds is None:
            yield
            return
        before = self.conn.execute("PRAGMA busy_timeout").fetchone()[0]
        self.set_lock_wait(seconds)
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {int(before)}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction taken up front, so concurrent writers queue
        instead of failing half-way with SQLITE_BUSY on upgrade."""
        if self.read_only:
            raise DatabaseError(f"the database {self.path} is read-only (file or mount); this command needs to"
                                " write to it")
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            if self.history_keep is not None:
                from . import history

                keep = self.history_keep() if callable(self.history_keep) else self.history_keep
                if history.keep_setting(self.conn) != keep:
                    history.set_keep(self.conn, keep)
                self.history_keep = None
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every read inside sees the same moment."""
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            self.conn.execute("COMMIT")

    # -- stores ---------------------------------------------------------------

    def ensure_store(self, name: str) -> None:
        self.conn.execute("INSERT OR IGNORE INTO stores (name) VALUES (?)", (name,))

    def store_names(self) -> list[str]:
        """Every store: those registered, and any that only rows name (a
        file another program wrote may skip the `stores` table)."""
        rows = self.conn.execute("SELECT name FROM stores UNION SELECT DISTINCT store FROM entries ORDER BY 1")
        return [r[0] for r in rows]

    def store_exists(self, name: str) -> bool:
        return self.conn.execute(
            "SELECT 1 FROM stores WHERE name = ? UNION ALL SELECT 1 FROM entries WHERE store = ? LIMIT 1",
            (name, name)).fetchone() is not None

    def store_summaries(self) -> list[StoreSummary]:
        rows = self.conn.execute(
            """SELECT s.name, count(e.slug), max(e.updated_at)
               FROM stores s LEFT JOIN entries e ON e.store = s.name
               GROUP BY s.name ORDER BY s.name"""
        )
        return [StoreSummary(name, count, last) for name, count, last in rows]

    def store_version(self, store: str) -> int:
        row = self.conn.execute(
            "SELECT version FROM thatch_cli_store_versions WHERE store = ?", (store,)
        ).fetchone()
        return row[0] if row else 0

    def count(self, stores: Sequence[str] | None = None) -> int:
        if stores is None:
            return self.conn.execute("SELECT count(*) FROM entries").fetchone()[0]
        return self.conn.execute(
            f"SELECT count(*) FROM entries WHERE store IN ({marks(stores)})", list(stores)).fetchone()[0]

    # -- reading entries -------------------------------------------------------

    def get(self, store: str, slug: str, *, with_vector: bool = False) -> Memory | None:
        extra = ", embedding" if with_vector else ""
        row = self.conn.execute(
            f"SELECT {COLUMNS}{extra} FROM entries WHERE store = ? AND slug = ?", (store, slug)
        ).fetchone()
        if row is None:
            return None
        return memory_from_row(row, row[12] if with_vector else None)

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
        newest_first: bool = False,
        limit: int | None = None,
    ) -> list[Memory]:
        """Memories in `stores` (all when None), by store then newest first,
        or `newest_first` across stores; at most `limit`. `branch` keeps only
        that branch's memories; `archived` None means both live and archived."""
        clause, args = self._list_filter(stores, branch, archived)
        order = "updated_at DESC, store, slug" if newest_first else "store, updated_at DESC, slug"
        tail = f" LIMIT {int(limit)}" if limit is not None else ""
        rows = self.conn.execute(f"SELECT {COLUMNS} FROM entries {clause} ORDER BY {order}{tail}", args)
        return [memory_from_row(r) for r in rows]

    def list_count(self, stores: Sequence[str] | None = None, *, branch: str | None = None,
                   archived: bool | None = False) -> int:
        """How many memories `list` with these filters and no limit returns."""
        clause, args = self._list_filter(stores, branch, archived)
        return self.conn.execute(f"SELECT count(*) FROM entries {clause}", args).fetchone()[0]

    @staticmethod
    def _list_filter(stores: Sequence[str] | None, branch: str | None, archived: bool | None) -> tuple[str, list]:
        where, args = [], []
        if stores is not None:
            where.append(f"store IN ({marks(stores)})")
            args += list(stores)
        if branch is not None:
            where.append("branch = ?")
            args.append(branch)
        if archived is not None:
            where.append("archived = ?")
            args.append(int(archived))
        return (f"WHERE {' AND '.join(where)}" if where else ""), args

    def labels(self, stores: Sequence[str]) -> list[str]:
        """Every label in `stores`, archived included (for did-you-mean)."""
        rows = self.conn.execute(f"SELECT label FROM entries WHERE store IN ({marks(stores)})", list(stores))
        return [r[0] for r in rows]

    def stores_with_slug(self, slug: str) -> list[str]:
        """The stores holding a memory with this slug."""
        return [r[0] for r in self.conn.execute("SELECT store FROM entries WHERE slug = ? ORDER BY store", (slug,))]

    def branches(self, stores: Sequence[str]) -> list[str]:
        """Branches that memories of `stores` are scoped to."""
        rows = self.conn.execute(
            f"SELECT DISTINCT branch FROM entries WHERE store IN ({marks(stores)})"
            " AND branch IS NOT NULL AND branch != '' ORDER BY branch",
            list(stores),
        )
        return [r[0] for r in rows]

    # -- writing entries -------------------------------------------------------

    def save(self, memory: Memory, *, overwrite: bool, archived: bool | None) -> Memory | None:
        """Insert `memory`, or replace the row with its slug when `overwrite`.

        Returns the row that was replaced (None for a new memory). Replacing
        keeps creation time and recall telemetry, keeps branch and confidence
        unless new ones are given, and clears the slug's dedup verdicts since
        new content may resolve or create duplicates.
        """
        with self.transaction():
            self.ensure_store(memory.store)
            existing = self.check_writable(memory.store, memory.slug, overwrite=overwrite, archived=archived)
            memory.archived = bool(archived)
            if existing is not None:
                memory.created_at = existing.created_at
                memory.recall_count = existing.recall_count
                memory.last_recalled_at = existing.last_recalled_at
                memory.branch = memory.branch if memory.branch is not None else existing.branch
                memory.confidence = memory.confidence if memory.confidence is not None else existing.confidence
            self.write_row(memory.columns(), replace=existing is not None)
        return existing

    def write_row(self, values: Mapping[str, Any], *, replace: bool) -> bool:
        """Write one row of `entries` (column name -> value) inside the
        caller's transaction. With `replace`, a row with the same store and
        slug is updated in place (the history keeps what it held) and its
        dedup verdicts are cleared: `save` and `import --overwrite` replace a
        memory the same way. Returns whether a row was replaced."""
        key = (values["store"], values["slug"])
        if replace and self._update(key, values):
            self.clear_verdicts(*key)
            return True
        names = list(values)
        self.conn.execute(f"INSERT INTO entries ({', '.join(map(_quoted, names))}) VALUES ({marks(names)})",
                          [values[n] for n in names])
        return False

    def _update(self, key: tuple[str, str], values: Mapping[str, Any]) -> int:
        """UPDATE the row at `key` to `values` (in place: the history and the
        keyword index see an update); how many rows changed."""
        names = list(values)
        assignments = ", ".join(f"{_quoted(n)} = ?" for n in names)
        return self.conn.execute(f"UPDATE entries SET {assignments} WHERE store = ? AND slug = ?",
                                 [values[n] for n in names] + list(key)).rowcount

    def rewrite(self, key: tuple[str, str] | None, values: Mapping[str, Any]) -> None:
        """Make `values` the memory now at `key` (None: a memory that no longer
        exists) inside the caller's transaction; its store and slug may differ
        from `key` (an earlier version from before a rename), but must not be
        another memory's. Dedup verdicts of the written memory are cleared."""
        target = (values["store"], values["slug"])
        if target != key and self.exists(*target):
            raise Conflict(f"another memory already holds the slug {target[1]!r} in {target[0]}",
                           store=target[0], slug=target[1])
        if key is None:
            self.write_row(values, replace=False)
        else:
            self._update(key, values)
        self.clear_verdicts(*target)

    def exists(self, store: str, slug: str) -> bool:
        return self.conn.execute("SELECT 1 FROM entries WHERE store = ? AND slug = ?", (store, slug)).fetchone() is not None

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
            self.clear_verdicts(store, slug)
        return existing

    def stamp_recalled(self, keys: Sequence[tuple[str, str]], now: str, *, wait: float | None = None) -> None:
        """Count a recall of `keys`. `wait` caps how long to queue behind
        another writer (seconds); raises sqlite3.OperationalError when the
        lock is not had by then, DatabaseError on a read-only database."""
        if not keys:
            return
        with self.waiting_at_most(wait), self.transaction() as conn:
            conn.executemany(
                "UPDATE entries SET recall_count = recall_count + 1, last_recalled_at = ?"
                " WHERE store = ? AND slug = ?",
                [(now, store, slug) for store, slug in keys],
            )

    def clear_verdicts(self, store: str, slug: str) -> None:
        """Forget every dedup verdict naming `slug`: its content changed or it is gone."""
        self.conn.execute(
            "DELETE FROM dedup_pairs WHERE store = ? AND (slug_a = ? OR slug_b = ?)", (store, slug, slug)
        )


def _quoted(column: str) -> str:
    return '"' + column + '"'
