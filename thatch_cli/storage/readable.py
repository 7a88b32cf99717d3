"""Reading past rows that cannot be decoded.

A text value that is not UTF-8 (written by another program with a cast, or
by damage) makes sqlite3 fail the whole query, so one such row used to fail
`list`, `stores`, `hygiene` and `export` for the entire database. Queries
that read many rows go through `rows`: the usual fast fetch, and only when
a value fails to decode the query again with lenient decoding, keeping the
rows that decode and handing back the others to be reported.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: every listing reads through here (light commands)
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any


class Undecodable(str):
    """A text value that was not UTF-8, as text with U+FFFD for the bad bytes."""


def lenient(data: bytes) -> str:
    """A text_factory: strict UTF-8, else an Undecodable."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return Undecodable(data.decode("utf-8", "replace"))


def bad(row: Sequence[Any]) -> bool:
    return any(isinstance(value, Undecodable) for value in row)


def _undecodable(exc: sqlite3.Error) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "Could not decode" in str(exc)


def rows(conn: sqlite3.Connection, sql: str, args: Sequence[Any] = ()) -> tuple[list, list]:
    """(rows that decode, rows that do not) of a query."""
    try:
        return conn.execute(sql, args).fetchall(), []
    except sqlite3.OperationalError as exc:
        if not _undecodable(exc):
            raise
    saved = conn.text_factory
    conn.text_factory = lenient
    try:
        fetched = conn.execute(sql, args).fetchall()
    finally:
        conn.text_factory = saved
    good = [row for row in fetched if not bad(row)]
    return good, [row for row in fetched if bad(row)]


@contextmanager
def leniently(conn: sqlite3.Connection) -> Iterator[None]:
    """Within the block, text that is not UTF-8 reads as Undecodable
    instead of failing the query (for a pass over every row: export)."""
    saved = conn.text_factory
    conn.text_factory = lenient
    try:
        yield
    finally:
        conn.text_factory = saved


def describe(rows: Sequence[Sequence[Any]], what: tuple[str, str], key: slice = slice(0, 2)) -> str:
    """'skipped 1 memory that cannot be read (text that is not UTF-8): acme/widget slug' for a
    notice; `what` is (singular, plural), `key` picks the columns that name a row."""
    from ..support.textsafe import one_line

    names = ", ".join(" ".join(one_line(str(value)) for value in row[key]) for row in rows[:3])
    more = f" and {len(rows) - 3} more" if len(rows) > 3 else ""
    return (f"skipped {len(rows)} {what[0] if len(rows) == 1 else what[1]} that cannot be read (text that is not"
            f" UTF-8): {names}{more}; 'thatch export' saves everything else")
