"""Stored vectors: reading them for ranking and duplicate scans, and
attaching new ones (reindex). Rows are handed back as BLOBs; comparing them
is ranking/'s business."""

from __future__ import annotations

from ..memory.fields import BY_NAME, FILTERED
from . import readable
from .memories import MemoryDB, marks

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


def vector_rows(db: MemoryDB, store: str) -> list[tuple[str, str | None, int, bytes, str | None, dict[str, Any]]]:
    """(slug, branch, archived, embedding, model, {filterable field: stored
    value}) of every row of `store` with a vector, by slug (a field whose
    column the file lacks yet is left out)."""
    have = set(db.columns())
    filtered = [f.name for f in FILTERED if f.column in have]
    extra = "".join(f', "{BY_NAME[name].column}"' for name in filtered)
    rows = readable.rows(db.conn, f"SELECT slug, branch, archived, embedding, model{extra} FROM entries"
                         " WHERE store = ? AND embedding IS NOT NULL ORDER BY slug", (store,))[0]
    return [(*row[:5], dict(zip(filtered, row[5:]))) for row in rows]


def inventory(db: MemoryDB, stores: Sequence[str]) -> list[tuple[str | None, int | None, int]]:
    """(model, embedding byte length, count) groups, to spot rows a model cannot rank."""
    return readable.rows(db.conn, f"SELECT model, length(embedding), count(*) FROM entries"
                         f" WHERE store IN ({marks(stores)}) GROUP BY model, length(embedding)", list(stores))[0]


def reindex_rows(db: MemoryDB, stores: Sequence[str] | None) -> list[tuple[str, str, str, str | None, int | None]]:
    """(store, slug, content, model, embedding length) of every row."""
    clause, args = "", []
    if stores is not None:
        clause = f"WHERE store IN ({marks(stores)})"
        args = list(stores)
    return db.conn.execute(
        f"SELECT store, slug, content, model, length(embedding) FROM entries {clause} ORDER BY store, slug", args
    ).fetchall()


def set_vector(db: MemoryDB, store: str, slug: str, content: str, embedding: bytes, model: str) -> bool:
    """Attach a vector computed from `content`; a row edited meanwhile is left alone."""
    cur = db.conn.execute(
        "UPDATE entries SET embedding = ?, model = ? WHERE store = ? AND slug = ? AND content = ?",
        (embedding, model, store, slug, content),
    )
    return cur.rowcount == 1


def legacy_model_paths(db: MemoryDB, configured: Callable[[], str]) -> list[str] | None:
    """The `model` values an older thatch recorded as folder paths, while
    the schema 4 upgrade left them marked pending; None when nothing is, or
    when they were already tried with the model setting `configured()`
    (read only when something is pending)."""
    rows = dict(db.conn.execute(
        "SELECT key, value FROM thatch_cli_meta WHERE key IN ('model_paths', 'model_paths_tried')").fetchall())
    if "model_paths" not in rows or rows.get("model_paths_tried") == configured():
        return None
    return [r[0] for r in db.conn.execute("SELECT DISTINCT model FROM entries WHERE model LIKE '/%'")]


def rename_models(db: MemoryDB, renames: dict[str, str], paths: Sequence[str], configured: str) -> None:
    """Record `renames` (old model value -> identity) in entries and the
    history; the pending mark goes once no path is left unrenamed, else it
    remembers that `configured` could not rename the rest (tried again when
    the model setting changes, not on every command)."""
    with db.transaction() as conn:
        for old, new in renames.items():
            conn.execute("UPDATE entries SET model = ? WHERE model = ?", (new, old))
            conn.execute("UPDATE thatch_cli_history SET model = ? WHERE model = ?", (new, old))
        if all(path in renames for path in paths):
            conn.execute("DELETE FROM thatch_cli_meta WHERE key IN ('model_paths', 'model_paths_tried')")
        else:
            conn.execute("INSERT OR REPLACE INTO thatch_cli_meta (key, value) VALUES ('model_paths_tried', ?)",
                         (configured,))
