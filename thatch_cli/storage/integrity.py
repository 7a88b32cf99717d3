"""A cheap look for damage before writing memories.

`PRAGMA integrity_check` reads the whole file (0.9 s for 100,000
memories), too slow for every `remember`. Index damage is what lets writes
go on while making things worse (a memory the primary key index cannot
find is saved a second time), and two looks catch it for a few
milliseconds: every index of `entries` must count the same rows, and the
first and last rows must be found through each index by their own values.
A file that fails either is refused for writing until it is repaired
(REINDEX rebuilds the indexes from the rows; a backup can be restored).
"""

from __future__ import annotations

import sqlite3


def _indexes(conn: sqlite3.Connection) -> list[tuple[str, list[str]]]:
    """(name, columns) of every full index of entries (partial ones count a subset)."""
    found = []
    for row in conn.execute("PRAGMA index_list(entries)"):
        name, partial = row[1], row[4]
        if partial:
            continue
        columns = [info[2] for info in conn.execute(f"PRAGMA index_info({_quoted(name)})")]
        if columns and all(columns):  # an index on expressions has no column names to look up by
            found.append((name, columns))
    return found


def damage(conn: sqlite3.Connection) -> str | None:
    """What is wrong with the indexes of entries, in words, or None."""
    try:
        indexes = _indexes(conn)
        counts = {name: conn.execute(f"SELECT count(*) FROM entries INDEXED BY {_quoted(name)}").fetchone()[0]
                  for name, _ in indexes}
        if len(set(counts.values())) > 1:
            listed = ", ".join(f"{name} {count}" for name, count in counts.items())
            return f"its indexes count different numbers of memories ({listed})"
        for name, columns in indexes:
            names = ", ".join(_quoted(c) for c in columns)
            samples = conn.execute(f"SELECT rowid, {names} FROM entries NOT INDEXED WHERE rowid IN"
                                   " ((SELECT min(rowid) FROM entries), (SELECT max(rowid) FROM entries))").fetchall()
            match = " AND ".join(f"{_quoted(c)} IS ?" for c in columns)
            for rowid, *values in samples:
                found = conn.execute(f"SELECT count(*) FROM entries INDEXED BY {_quoted(name)}"
                                     f" WHERE {match} AND rowid = ?", (*values, rowid)).fetchone()[0]
                if found != 1:
                    return f"the index {name} does not find row {rowid}"
    except sqlite3.DatabaseError as exc:
        if "malformed" in str(exc) or "corrupt" in str(exc):
            return str(exc)
        raise
    return None


def refuse_if_damaged(conn: sqlite3.Connection, path: object) -> None:
    """DatabaseError when damage() finds something (inside the caller's
    write transaction, before anything is written)."""
    problem = damage(conn)
    if problem is not None:
        from ..support.errors import DatabaseError

        raise DatabaseError(f"not writing to {path}: it is damaged ({problem}; PRAGMA integrity_check reports the"
                            f" rest), and writing would make it worse; nothing was written. Rebuild its indexes from"
                            f" the rows (sqlite3 {path} REINDEX) or restore a backup (thatch restore FILE)")


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
