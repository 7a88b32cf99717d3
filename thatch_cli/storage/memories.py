"""The memory database: stores and entries, read and written.

`MemoryDB` stores vectors it is handed and hands rows back; it knows nothing
of embedding models (the model name is just a column). Full-text search,
vector rows, maintenance and bulk transfer live beside it in this package,
each taking a `MemoryDB`; no module outside `storage/` writes SQL.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

from ..memory import fields
from ..memory.filter import Filter
from ..memory.records import Memory, StoreSummary
from ..support.errors import Conflict, DatabaseError, NotFound
from . import fastread, opening, readable, sync
from .filters import conditions

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    import builtins  # `list` in MemoryDB's annotations is its method
    import os
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from pathlib import Path
    from typing import Any


# A row selected in the fields' order (slug, store, ...) named as "store slug".
_STORE_SLUG = slice(1, None, -1)


def _quoted(column: str) -> str:
    return '"' + column + '"'


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
        self._columns: list[str] | None = None
        self._has_marks: bool | None = None  # the sync marks table (schema 5+) exists
        # What opening the file found that the user should know (storage/opening.py).
        self.notices: list[str] = []
        # Told, in words (once each), about rows a read skipped because they
        # cannot be decoded; `unreadable` counts the rows skipped.
        self.on_unreadable: Callable[[str], None] = lambda text: None
        self.unreadable: set[tuple] = set()

    def readable_rows(self, sql: str, args: Sequence[Any] = (), what: tuple[str, str] = ("memory", "memories"),
                      key: slice = slice(0, 2)) -> list:
        """The rows of a query that decode; the others are reported (storage/readable.py)."""
        good, bad = readable.rows(self.conn, sql, args)
        new = [row for row in bad if tuple(row[key]) not in self.unreadable]
        if new:
            self.unreadable.update(tuple(row[key]) for row in new)
            self.on_unreadable(readable.describe(new, what, key))
        return good

    @classmethod
    def open(cls, path: str | Path, *, create_parent: bool = True,
             history_keep: int | Callable[[], int] | None = None) -> MemoryDB:
        """Open (creating or upgrading) the database at `path`; its directory
        is created only with `create_parent`. A file this process cannot write
        opens read-only."""
        conn, read_only, notices = opening.open_database(path, create_parent=create_parent)
        db = cls(conn, path, read_only=read_only, history_keep=history_keep)
        db.notices = notices
        return db

    @classmethod
    def open_existing(cls, path: str | Path) -> MemoryDB:
        """Open a thatch database that already exists at this schema; create and migrate nothing."""
        return cls(opening.connect_existing(path), path)

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

    # Which stores exist is asked of fastread.py, as the hot paths ask it.

    def store_names(self) -> list[str]:
        """Every store: those registered, and any that only rows name (a
        file another program wrote may skip the `stores` table)."""
        rows = self.readable_rows(fastread.STORE_NAMES, what=("store", "stores"), key=slice(0, 1))
        return [r[0] for r in rows]

    def store_exists(self, name: str) -> bool:
        return fastread.store_exists(self.conn, name)

    def store_summaries(self) -> list[StoreSummary]:
        rows = self.readable_rows(fastread.STORE_SUMMARIES, what=("store", "stores"), key=slice(0, 1))
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

    def columns(self, *, with_vector: bool = False) -> list[str]:
        """The columns a Memory is read from: every field (memory/fields.py) this
        file's `entries` has (a file not yet upgraded, opened read-only, may
        lack a newer one), the vector only when asked for."""
        if self._columns is None:
            have = {row[1] for row in self.conn.execute("PRAGMA table_info(entries)")}
            self._columns = [f.column for f in fields.ENTRIES if f.column in have]
        return [c for c in self._columns if with_vector or c != "embedding"]

    def _select(self, with_vector: bool = False) -> tuple[list[str], str]:
        names = self.columns(with_vector=with_vector)
        return names, "SELECT " + ", ".join(map(_quoted, names)) + " FROM entries"

    def get(self, store: str, slug: str, *, with_vector: bool = False) -> Memory | None:
        names, select = self._select(with_vector)
        row = self.conn.execute(f"{select} WHERE store = ? AND slug = ?", (store, slug)).fetchone()
        return None if row is None else self._marked([Memory.from_row(names, row)])[0]

    def get_many(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Memory]:
        found: dict[tuple[str, str], Memory] = {}
        names, select = self._select()
        for store, slug in keys:
            rows = self.readable_rows(f"{select} WHERE store = ? AND slug = ?", (store, slug), key=_STORE_SLUG)
            if rows:
                found[(store, slug)] = Memory.from_row(names, rows[0])
        self._marked(list(found.values()))
        return found

    def list(self, stores: Sequence[str] | None = None, *, archived: bool | None = False) -> builtins.list[Memory]:
        """Every memory of `stores` (all when None), by store then newest
        first: live ones, archived ones (`archived`), or both (None)."""
        return self.select(Filter(stores or (), all_stores=stores is None, any_branch=True,
                                  archived=archived is None, only_archived=bool(archived)))

    def select(self, where: Filter, *, newest_first: bool = False, flagged_first: bool = False,
               limit: int | None = None) -> builtins.list[Memory]:
        """The memories `where` keeps, by store then newest first, or
        `newest_first` across stores; `flagged_first` puts memories with a
        `first` flag (memory/fields.py) before the rest; at most `limit`."""
        clause, args = self._where(where)
        order = "updated_at DESC, store, slug" if newest_first else "store, updated_at DESC, slug"
        names, select = self._select()
        if flagged_first:
            order = "".join(f"{f.column} DESC, " for f in fields.FIRST if f.column in names) + order
        tail = f" LIMIT {int(limit)}" if limit is not None else ""
        rows = self.readable_rows(f"{select} WHERE {clause} ORDER BY {order}{tail}", args, key=_STORE_SLUG)
        return self._marked([Memory.from_row(names, r) for r in rows])

    def count_where(self, where: Filter) -> int:
        """How many memories `select(where)` with no limit returns."""
        clause, args = self._where(where)
        return self.conn.execute(f"SELECT count(*) FROM entries WHERE {clause}", args).fetchone()[0]

    @staticmethod
    def _where(where: Filter) -> tuple[str, builtins.list]:
        clause, args = conditions(where)
        if where.all_stores:
            return clause, args
        return f"store IN ({marks(where.stores)}) AND {clause}", [*where.stores, *args]

    def _marked(self, memories: builtins.list[Memory]) -> builtins.list[Memory]:
        """`memories` with their sync marks (author, private, unreviewed)."""
        if self._has_marks is None:
            self._has_marks = sync.has_marks(self.conn)
        if self._has_marks and memories:
            sync.attach(self.conn, memories)
        return memories

    def labels(self, stores: Sequence[str]) -> builtins.list[str]:
        """Every label in `stores`, archived included (for did-you-mean)."""
        good, _ = readable.rows(self.conn, *fastread.values_query("label", stores))
        return [r[0] for r in good]

    def stores_with_slug(self, slug: str) -> builtins.list[str]:
        """The stores holding a memory with this slug."""
        return [r[0] for r in self.conn.execute("SELECT store FROM entries WHERE slug = ? ORDER BY store", (slug,))]

    def branches(self, stores: Sequence[str]) -> builtins.list[str]:
        """Branches that memories of `stores` are scoped to (archived ones too)."""
        return fastread.values(self.conn, "branch", stores)

    # -- writing entries -------------------------------------------------------

    def save(self, memory: Memory, *, overwrite: bool, archived: bool | None) -> Memory | None:
        """Insert `memory`, or replace the row with its slug when `overwrite`.

        Returns the row that was replaced (None for a new memory). Replacing
        keeps what each field's `overwrite` rule says (memory/fields.py: creation
        time and recall telemetry always; branch, confidence and the like
        unless new ones are given), and clears the slug's dedup verdicts
        since new content may resolve or create duplicates.
        """
        with self.transaction():
            from . import integrity  # writes only

            integrity.refuse_if_damaged(self.conn, self.path)
            self.ensure_store(memory.store)
            existing = self.check_writable(memory.store, memory.slug, overwrite=overwrite, archived=archived)
            memory.archived = bool(archived)
            keep_fields(memory, existing)
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

    def delete(self, store: str, slug: str, now: str | None = None) -> Memory:
        """Forget a memory; `now` dates the version its history keeps (the
        forget's time, which sync orders it by)."""
        with self.transaction() as conn:
            existing = self.get(store, slug)
            if existing is None:
                raise NotFound(f"no memory {slug!r} in store {store}", store=store, slug=slug)
            conn.execute("DELETE FROM entries WHERE store = ? AND slug = ?", (store, slug))
            self.clear_verdicts(store, slug)
            if now is not None:
                from . import history

                history.date_newest(conn, store, slug, "deleted", now)
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


def keep_fields(memory: Memory, existing: Memory | None) -> None:
    """Give `memory`, about to replace `existing` (None: a new memory), what
    the fields' overwrite rules keep: always ("keep"), or when `memory` has
    no value ("given"; a new memory then gets the field's default)."""
    for f in fields.FIELDS:
        if f.overwrite == "given" and getattr(memory, f.name) is None:
            setattr(memory, f.name, f.default if existing is None else getattr(existing, f.name))
        elif f.overwrite == "keep" and existing is not None:
            setattr(memory, f.name, getattr(existing, f.name))
