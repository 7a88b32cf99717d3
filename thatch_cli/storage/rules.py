"""Learned rules: the original thatch's prediction and behavior tables, read
and written the way it does, so both programs share the same rows.

Each kind (Kind) has four tables: matchers (a situation, embedded), items
(a statement with its Bayesian confidence), weighted edges between them
and provenance (one row per change). The tables are created when missing,
exactly as the original declares them (additive: nothing else changes and
no row the original wrote is rewritten except by the same updates it
makes itself). Reads of a file without them see no rules.

Standard library only: the prompt hook reads matchers through here.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2 ms to import typing
if TYPE_CHECKING:
    from typing import Any, Sequence

# The confidence model both programs share: posterior (confirm + K * P0) / (confirm + disconfirm + K),
# a soft signal a quarter of a disconfirm, no decay.
K = 5
P0 = 0.5
W_SOFT = 0.25
SIGNALS = ("confirm", "disconfirm", "soft")
PROVENANCE_SHOWN = 10  # the original's list shows the last ten changes


class Kind:
    """One engine's tables: `predictions` or `behaviors`."""

    __slots__ = ("name", "matchers", "items", "edges", "provenance", "fk")

    def __init__(self, name: str, prefix: str, items: str, fk: str) -> None:
        self.name = name
        self.matchers, self.items = f"{prefix}_matchers", items
        self.edges, self.provenance, self.fk = f"{prefix}_edges", f"{prefix}_provenance", fk

    def __repr__(self) -> str:
        return f"Kind({self.name!r})"


PREDICTIONS = Kind("prediction", "prediction", "predictions", "prediction_id")
BEHAVIORS = Kind("behavior", "behavior", "behaviors", "behavior_id")
KINDS = (PREDICTIONS, BEHAVIORS)
KIND_NAMES = tuple(kind.name for kind in KINDS)

_NOW = "(strftime('%Y-%m-%dT%H:%M:%SZ','now'))"


def _ddl(kind: Kind) -> list[str]:
    """The original's CREATE TABLE statements (src/db.ts), column for column."""
    return [
        f"""CREATE TABLE IF NOT EXISTS {kind.matchers} (
        id          TEXT PRIMARY KEY,
        store       TEXT NOT NULL REFERENCES stores(name),
        description TEXT NOT NULL,
        embedding   BLOB,
        model       TEXT,
        created_at  TEXT NOT NULL DEFAULT {_NOW},
        updated_at  TEXT NOT NULL DEFAULT {_NOW}
      )""",
        f"""CREATE TABLE IF NOT EXISTS {kind.items} (
        id              TEXT PRIMARY KEY,
        store           TEXT NOT NULL REFERENCES stores(name),
        statement       TEXT NOT NULL,
        rationale       TEXT,
        embedding       BLOB,
        model           TEXT,
        confidence      REAL NOT NULL DEFAULT 0.5,
        confirm_count   REAL NOT NULL DEFAULT 0,
        disconfirm_count REAL NOT NULL DEFAULT 0,
        created_at      TEXT NOT NULL DEFAULT {_NOW},
        updated_at      TEXT NOT NULL DEFAULT {_NOW}
      )""",
        f"""CREATE TABLE IF NOT EXISTS {kind.edges} (
        matcher_id    TEXT NOT NULL,
        {kind.fk} TEXT NOT NULL,
        weight        REAL NOT NULL DEFAULT 1.0,
        created_at    TEXT NOT NULL DEFAULT {_NOW},
        PRIMARY KEY (matcher_id, {kind.fk}),
        FOREIGN KEY (matcher_id) REFERENCES {kind.matchers}(id) ON DELETE CASCADE,
        FOREIGN KEY ({kind.fk}) REFERENCES {kind.items}(id) ON DELETE CASCADE
      )""",
        f"""CREATE TABLE IF NOT EXISTS {kind.provenance} (
        id            TEXT PRIMARY KEY,
        {kind.fk} TEXT NOT NULL,
        signal        TEXT NOT NULL,
        detail        TEXT,
        created_at    TEXT NOT NULL DEFAULT {_NOW},
        FOREIGN KEY ({kind.fk}) REFERENCES {kind.items}(id) ON DELETE CASCADE
      )""",
    ]


def ensure_tables(conn: sqlite3.Connection) -> None:
    """Create whichever of the eight tables are missing (inside the caller's transaction)."""
    for kind in KINDS:
        for statement in _ddl(kind):
            conn.execute(statement)


def has_tables(conn: sqlite3.Connection, kind: Kind) -> bool:
    names = {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (?, ?, ?, ?)",
        (kind.matchers, kind.items, kind.edges, kind.provenance))}
    return len(names) == 4


def _new_id() -> str:
    # uuid imports platform (~7 ms): only writes pay for it, never the prompt hook.
    import uuid

    return str(uuid.uuid4())


def now() -> str:
    """The original's timestamps: ISO 8601 with milliseconds, UTC."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


# -- reads ---------------------------------------------------------------------------------------


def matchers(conn: sqlite3.Connection, kind: Kind, stores: Sequence[str]) -> list[tuple[str, str, str, bytes | None, str | None]]:
    """(id, store, description, embedding, model) of every matcher of `stores`."""
    if not stores or not has_tables(conn, kind):
        return []
    return conn.execute(f"SELECT id, store, description, embedding, model FROM {kind.matchers}"
                        f" WHERE store IN ({_marks(stores)})", list(stores)).fetchall()


def any_matchers(conn: sqlite3.Connection, kinds: Sequence[Kind] = KINDS) -> bool:
    """Whether any store has a matcher of `kinds`: the prompt hook looks no
    further (no model call, no rule code) in the usual file without rules."""
    return any(has_tables(conn, kind) and conn.execute(f"SELECT 1 FROM {kind.matchers} LIMIT 1").fetchone()
               for kind in kinds)


ITEM_COLUMNS = ("id", "store", "statement", "rationale", "confidence", "confirm_count", "disconfirm_count",
                "created_at", "updated_at")


def items(conn: sqlite3.Connection, kind: Kind, stores: Sequence[str] | None = None,
          with_vector: bool = False) -> list[dict[str, Any]]:
    """The items of `stores` (all stores when None), most confident first;
    with_vector adds `embedding` and `model`."""
    if not has_tables(conn, kind):
        return []
    columns = ", ".join(ITEM_COLUMNS + (("embedding", "model") if with_vector else ()))
    where, args = ("", []) if stores is None else (f" WHERE store IN ({_marks(stores)})", list(stores))
    cursor = conn.execute(f"SELECT {columns} FROM {kind.items}{where} ORDER BY confidence DESC, rowid", args)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def item(conn: sqlite3.Connection, kind: Kind, item_id: str) -> dict[str, Any] | None:
    if not has_tables(conn, kind):
        return None
    cursor = conn.execute(f"SELECT {', '.join(ITEM_COLUMNS)} FROM {kind.items} WHERE id = ?", (item_id,))
    row = cursor.fetchone()
    return dict(zip(ITEM_COLUMNS, row)) if row else None


def edges_of_matchers(conn: sqlite3.Connection, kind: Kind, matcher_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Items linked to these matchers: the item's columns plus matcher_id and weight, by statement."""
    if not matcher_ids or not has_tables(conn, kind):
        return []
    columns = ", ".join(f"p.{c}" for c in ITEM_COLUMNS)
    cursor = conn.execute(
        f"SELECT {columns}, e.matcher_id, e.weight FROM {kind.edges} e JOIN {kind.items} p ON e.{kind.fk} = p.id"
        f" WHERE e.matcher_id IN ({_marks(matcher_ids)}) ORDER BY p.statement", list(matcher_ids))
    names = [*ITEM_COLUMNS, "matcher_id", "weight"]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def matchers_of_item(conn: sqlite3.Connection, kind: Kind, item_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        f"SELECT e.matcher_id, m.description, e.weight FROM {kind.edges} e JOIN {kind.matchers} m"
        f" ON e.matcher_id = m.id WHERE e.{kind.fk} = ? ORDER BY e.created_at, m.description", (item_id,))
    return [{"id": i, "description": d, "weight": w} for i, d, w in rows.fetchall()]


def provenance(conn: sqlite3.Connection, kind: Kind, item_id: str,
               limit: int | None = PROVENANCE_SHOWN) -> list[dict[str, Any]]:
    """The item's changes, newest first (the original's last ten by default)."""
    tail = "" if limit is None else f" LIMIT {int(limit)}"
    rows = conn.execute(f"SELECT signal, detail, created_at FROM {kind.provenance} WHERE {kind.fk} = ?"
                        f" ORDER BY rowid DESC{tail}", (item_id,))
    return [{"signal": s, "detail": d, "created_at": c} for s, d, c in rows.fetchall()]


def counts(conn: sqlite3.Connection, kind: Kind) -> dict[str, int]:
    """How many items each store holds."""
    if not has_tables(conn, kind):
        return {}
    return dict(conn.execute(f"SELECT store, count(*) FROM {kind.items} GROUP BY store ORDER BY store").fetchall())


# -- writes (inside the caller's transaction) -----------------------------------------------------------------


def create_matcher(conn: sqlite3.Connection, kind: Kind, store: str, description: str, embedding: bytes | None,
                   model: str | None) -> str:
    conn.execute("INSERT OR IGNORE INTO stores (name) VALUES (?)", (store,))
    new_id, stamp = _new_id(), now()
    conn.execute(f"INSERT INTO {kind.matchers} (id, store, description, embedding, model, created_at, updated_at)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?)", (new_id, store, description, embedding, model, stamp, stamp))
    return new_id


def create_item(conn: sqlite3.Connection, kind: Kind, store: str, statement: str, rationale: str | None,
                embedding: bytes | None, model: str | None) -> str:
    conn.execute("INSERT OR IGNORE INTO stores (name) VALUES (?)", (store,))
    new_id, stamp = _new_id(), now()
    conn.execute(f"INSERT INTO {kind.items} (id, store, statement, rationale, embedding, model, confidence,"
                 " confirm_count, disconfirm_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?)",
                 (new_id, store, statement, rationale, embedding, model, P0, stamp, stamp))
    return new_id


def create_edge(conn: sqlite3.Connection, kind: Kind, matcher_id: str, item_id: str, weight: float = 1.0) -> None:
    """Link them; an existing edge keeps its weight."""
    conn.execute(f"INSERT INTO {kind.edges} (matcher_id, {kind.fk}, weight, created_at) VALUES (?, ?, ?, ?)"
                 f" ON CONFLICT(matcher_id, {kind.fk}) DO NOTHING", (matcher_id, item_id, weight, now()))


def adjust(conn: sqlite3.Connection, kind: Kind, item_id: str, signal: str) -> None:
    """Apply one signal with the original's single UPDATE: SQLite evaluates
    the SET expressions on the old values, so two writers never lose one."""
    if signal not in SIGNALS:
        raise ValueError(f"unknown signal {signal!r}")
    confirm = 1 if signal == "confirm" else 0
    disconfirm = 1.0 if signal == "disconfirm" else (W_SOFT if signal == "soft" else 0.0)
    conn.execute(
        f"UPDATE {kind.items} SET confirm_count = confirm_count + ?, disconfirm_count = disconfirm_count + ?,"
        " confidence = (confirm_count + ? + ? * ?) / (confirm_count + ? + disconfirm_count + ? + ?), updated_at = ?"
        " WHERE id = ?", (confirm, disconfirm, confirm, K, P0, confirm, disconfirm, K, now(), item_id))


def add_provenance(conn: sqlite3.Connection, kind: Kind, item_id: str, signal: str, detail: str | None) -> None:
    conn.execute(f"INSERT INTO {kind.provenance} (id, {kind.fk}, signal, detail) VALUES (?, ?, ?, ?)",
                 (_new_id(), item_id, signal, detail))


def delete_item(conn: sqlite3.Connection, kind: Kind, item_id: str) -> bool:
    """Delete it with its edges and provenance (as the original's cascade does,
    whether or not this connection enforces foreign keys)."""
    conn.execute(f"DELETE FROM {kind.edges} WHERE {kind.fk} = ?", (item_id,))
    conn.execute(f"DELETE FROM {kind.provenance} WHERE {kind.fk} = ?", (item_id,))
    return conn.execute(f"DELETE FROM {kind.items} WHERE id = ?", (item_id,)).rowcount > 0


# -- export and import ---------------------------------------------------------------------------------------

TABLE_COLUMNS = {
    "matchers": ("id", "store", "description", "embedding", "model", "created_at", "updated_at"),
    "items": ("id", "store", "statement", "rationale", "embedding", "model", "confidence", "confirm_count",
              "disconfirm_count", "created_at", "updated_at"),
}


def columns_of(kind: Kind, table: str) -> tuple[str, ...]:
    if table in TABLE_COLUMNS:
        return TABLE_COLUMNS[table]
    return ("matcher_id", kind.fk, "weight", "created_at") if table == "edges" else (
        "id", kind.fk, "signal", "detail", "created_at")


def rows_of(conn: sqlite3.Connection, kind: Kind, table: str, stores: Sequence[str] | None) -> list[dict[str, Any]]:
    """Every row of one table ("matchers", "items", "edges", "provenance") of `stores` (all when None)."""
    if not has_tables(conn, kind):
        return []
    columns = columns_of(kind, table)
    if table in TABLE_COLUMNS:
        name = kind.matchers if table == "matchers" else kind.items
        where, args = ("", []) if stores is None else (f" WHERE store IN ({_marks(stores)})", list(stores))
        sql = f"SELECT {', '.join(columns)} FROM {name}{where} ORDER BY rowid"
    else:
        name = kind.edges if table == "edges" else kind.provenance
        where, args = ("", []) if stores is None else (
            f" WHERE t.{kind.fk} IN (SELECT id FROM {kind.items} WHERE store IN ({_marks(stores)}))", list(stores))
        sql = f"SELECT {', '.join('t.' + c for c in columns)} FROM {name} t{where} ORDER BY t.rowid"
    return [dict(zip(columns, row)) for row in conn.execute(sql, args).fetchall()]


def insert_rows(conn: sqlite3.Connection, kind: Kind, table: str, rows: Sequence[dict[str, Any]]) -> int:
    """Add rows an export holds; a row whose key exists is left as it is. Returns how many were added."""
    name = {"matchers": kind.matchers, "items": kind.items, "edges": kind.edges,
            "provenance": kind.provenance}[table]
    allowed = set(columns_of(kind, table))
    added = 0
    for row in rows:
        if "store" in row:
            conn.execute("INSERT OR IGNORE INTO stores (name) VALUES (?)", (row["store"],))
        columns = [c for c in row if c in allowed]  # names come from a file: only the table's own are used
        cursor = conn.execute(f"INSERT OR IGNORE INTO {name} ({', '.join(columns)}) VALUES ({_marks(columns)})",
                              [row[c] for c in columns])
        added += cursor.rowcount
    return added


# -- the default behaviors' bookkeeping -------------------------------------------------------------------


def meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM thatch_cli_meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO thatch_cli_meta (key, value) VALUES (?, ?)", (key, value))


def stamped(conn: sqlite3.Connection, kind: Kind, store: str, stamp: str) -> list[dict[str, Any]]:
    """The items of `store` whose rationale carries `stamp` (a seeder's mark)."""
    if not has_tables(conn, kind):
        return []
    cursor = conn.execute(f"SELECT {', '.join(ITEM_COLUMNS)} FROM {kind.items} WHERE store = ? AND instr(rationale, ?)"
                          " > 0 ORDER BY rowid", (store, stamp))
    return [dict(zip(ITEM_COLUMNS, row)) for row in cursor.fetchall()]


def totals(conn: sqlite3.Connection) -> dict[str, int]:
    """{"predictions": n, "behaviors": n} across every store (status)."""
    return {kind.items: sum(counts(conn, kind).values()) for kind in KINDS}


def delete_unlinked_matchers(conn: sqlite3.Connection, kind: Kind, store: str, descriptions: Sequence[str]) -> int:
    """Delete the matchers of `store` with one of these descriptions that no edge uses any more."""
    if not descriptions:
        return 0
    return conn.execute(
        f"DELETE FROM {kind.matchers} WHERE store = ? AND description IN ({_marks(descriptions)})"
        f" AND id NOT IN (SELECT matcher_id FROM {kind.edges})", [store, *descriptions]).rowcount
