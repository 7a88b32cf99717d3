"""Bulk export and import at the table level: every column of `entries`,
including ones this version does not know, so nothing a newer schema or the
original thatch added is lost on the way through a file."""

from __future__ import annotations

import sqlite3
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..memory import fields
from . import history, integrity
from .memories import MemoryDB, marks

# Fields an export writes only with vectors (memory/fields.py `exported`).
_WITH_VECTORS = {f.column for f in fields.FIELDS if f.exported == "vectors"}


def exported(columns, with_vectors: bool) -> list[str]:
    """The columns an export writes: every one (those of other programs
    too), vectors only when asked for."""
    return [c for c in columns if with_vectors or c not in _WITH_VECTORS]


def entry_columns(db: MemoryDB) -> list[tuple[str, str]]:
    """(name, declared type) of every column of entries, in table order."""
    return [(row[1], (row[2] or "").upper()) for row in db.conn.execute("PRAGMA table_info(entries)")]


def iter_rows(db: MemoryDB, stores: Sequence[str] | None, *, with_vectors: bool) -> Iterator[dict[str, Any]]:
    """One dict (column -> stored value) per memory, by store then slug."""
    columns = exported([name for name, _ in entry_columns(db)], with_vectors)
    names = ", ".join(f'"{name}"' for name in columns)
    where, args = "", []
    if stores is not None:
        where, args = f"WHERE store IN ({marks(stores)})", list(stores)
    for row in db.conn.execute(f"SELECT {names} FROM entries {where} ORDER BY store, slug", args):
        yield dict(zip(columns, row))


def write_batch(db: MemoryDB, rows: Sequence[tuple[int, Mapping[str, Any]]], *, overwrite: bool,
                conflict: Callable[[int, str, str], None], failed: Callable[[int, str], None]) -> tuple[int, int]:
    """Write (line, values) rows in one transaction, each inside a savepoint
    so one bad row never takes the others with it. A row whose memory
    exists is replaced exactly as `remember --overwrite` replaces one
    (MemoryDB.write_row), or reported through `conflict` without
    `overwrite`. Returns (created, replaced)."""
    created = replaced = 0
    with db.transaction() as conn:
        integrity.refuse_if_damaged(conn, db.path)
        for store in dict.fromkeys(values["store"] for _, values in rows):
            db.ensure_store(store)
        for line, values in rows:
            key = (values["store"], values["slug"])
            conn.execute("SAVEPOINT import_row")
            try:
                if not overwrite and db.exists(*key):  # written meanwhile by someone else
                    conn.execute("RELEASE import_row")
                    conflict(line, *key)
                    continue
                was = db.write_row(values, replace=overwrite)
                conn.execute("RELEASE import_row")
            except sqlite3.Error as exc:
                conn.execute("ROLLBACK TO import_row")
                conn.execute("RELEASE import_row")
                failed(line, f"cannot write {key[0]}/{key[1]}: {exc}")
                continue
            replaced += was
            created += not was
    return created, replaced


def iter_verdicts(db: MemoryDB, stores: Sequence[str] | None) -> Iterator[dict[str, Any]]:
    where, args = "", []
    if stores is not None:
        where, args = f"WHERE store IN ({marks(stores)})", list(stores)
    names = ("store", "slug_a", "slug_b", "status", "checked_at")
    for row in db.conn.execute(f"SELECT {', '.join(names)} FROM dedup_pairs {where} ORDER BY store, slug_a, slug_b",
                               args):
        yield dict(zip(names, row))


def iter_versions(db: MemoryDB, stores: Sequence[str] | None, *, with_vectors: bool) -> Iterator[dict[str, Any]]:
    for row in history.export_rows(db.conn, stores):
        yield {name: row[name] for name in exported(row, with_vectors)}


def write_records(db: MemoryDB, records: Sequence[tuple[int, str, Mapping[str, Any]]], *, overwrite: bool,
                  failed: Callable[[int, str], None]) -> tuple[int, int]:
    """Write (line, kind, values) verdicts and kept versions in one
    transaction. A verdict already recorded on the pair is kept unless
    `overwrite`; a version the memory already has is not added twice.
    Returns (verdicts, versions) written."""
    verdicts = versions = 0
    if not records:
        return 0, 0
    with db.transaction() as conn:
        for line, kind, values in records:
            conn.execute("SAVEPOINT import_record")
            try:
                if kind == "verdict":
                    verb = "INSERT OR REPLACE" if overwrite else "INSERT OR IGNORE"
                    verdicts += conn.execute(
                        f"{verb} INTO dedup_pairs (store, slug_a, slug_b, status, checked_at) VALUES (?, ?, ?, ?, ?)",
                        [values[k] for k in ("store", "slug_a", "slug_b", "status", "checked_at")]).rowcount
                else:
                    versions += history.import_row(conn, values)
                conn.execute("RELEASE import_record")
            except sqlite3.Error as exc:
                conn.execute("ROLLBACK TO import_record")
                conn.execute("RELEASE import_record")
                failed(line, f"cannot write this {kind}: {exc}")
    return verdicts, versions
