"""Learned rules in `thatch export` / `thatch import`: one JSONL line per
rule (`"_record": "rule"`), self-contained: `kind` (prediction or
behavior), the item's columns, its `matchers` (their columns and the edge's
`weight`) and its `provenance`. Vectors (base64, as memories' are) only
with --with-vectors; a rule imported without one is embedded when it is
next compared (ops/rules_match.py).

Import adds what is missing by id and never changes a row that exists (a
rule already here keeps its confidence), so importing the same file twice
changes nothing. --store moves the rule and its matchers to that store.
"""

from __future__ import annotations

import base64
import binascii
import math
import sqlite3

from ..memory import jsonl
from ..storage import readable
from ..storage import rules as table
from ..support import validate
from ..support.errors import InvalidInput
from .rules import kind_named

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator

TEXT_LIMIT = validate.MAX_CONTENT_BYTES


def records(conn: sqlite3.Connection, stores: list[str] | None, with_vectors: bool) -> Iterator[dict[str, Any]]:
    """The export lines of the rules of `stores` (every store when None)."""
    for kind in table.KINDS:
        matchers = {row["id"]: row for row in table.rows_of(conn, kind, "matchers", None)}
        edges: dict[str, list[dict[str, Any]]] = {}
        for edge in table.rows_of(conn, kind, "edges", stores):
            edges.setdefault(edge[kind.fk], []).append(edge)
        changes: dict[str, list[dict[str, Any]]] = {}
        for change in table.rows_of(conn, kind, "provenance", stores):
            changes.setdefault(change[kind.fk], []).append({k: v for k, v in change.items() if k != kind.fk})
        for item in table.rows_of(conn, kind, "items", stores):
            linked = [{**_vector(matchers[e["matcher_id"]], with_vectors), "weight": e["weight"],
                       "linked_at": e["created_at"]} for e in edges.get(item["id"], []) if e["matcher_id"] in matchers]
            # A matcher or change that cannot be decoded is left out; an item that cannot is named by export.
            yield {jsonl.RECORD_KEY: "rule", "kind": kind.name, **_vector(item, with_vectors),
                   "matchers": [m for m in linked if not readable.bad(list(m.values()))],
                   "provenance": [c for c in changes.get(item["id"], []) if not readable.bad(list(c.values()))]}


def _vector(row: dict[str, Any], with_vectors: bool) -> dict[str, Any]:
    out = dict(row)
    if not with_vectors or out.get("embedding") is None:
        out.pop("embedding", None)
        if not with_vectors:
            out.pop("model", None)
    else:
        out["embedding"] = base64.b64encode(out["embedding"]).decode("ascii")
    return out


# -- import ----------------------------------------------------------------------------------------------------


def _text(record: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = record.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise jsonl.Invalid(f"rule: {name!r} must be a non-empty string")
    if len(value.encode("utf-8", "replace")) > TEXT_LIMIT:
        raise jsonl.Invalid(f"rule: {name!r} is over {TEXT_LIMIT} bytes")
    return value


def _number(record: dict[str, Any], name: str, default: float, low: float = 0.0, high: float = math.inf) -> float:
    value = record.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        raise jsonl.Invalid(f"rule: {name!r} must be a number from {low:g} to {high:g}")
    return float(value)


def _blob(record: dict[str, Any]) -> tuple[bytes | None, str | None]:
    value, model = record.get("embedding"), record.get("model")
    if value is None:
        return None, model if isinstance(model, str) else None
    try:
        blob = base64.b64decode(value, validate=True) if isinstance(value, str) else None
    except (binascii.Error, ValueError):
        blob = None
    if blob is None or len(blob) % 4:
        raise jsonl.Invalid("rule: 'embedding' must be base64 float32 data")
    return blob, model if isinstance(model, str) else None


def parsed(record: dict[str, Any], store: str) -> dict[str, Any]:
    """A rule line checked and shaped for `write` (jsonl.Invalid says what is wrong)."""
    try:
        kind = kind_named(str(record.get("kind")))
        store = validate.store(store)
    except InvalidInput as exc:
        raise jsonl.Invalid(f"rule: {exc.message}") from None
    blob, model = _blob(record)
    item = {"id": _text(record, "id"), "store": store, "statement": _text(record, "statement"),
            "rationale": _text(record, "rationale", required=False), "embedding": blob, "model": model,
            "confidence": _number(record, "confidence", table.P0, 0.0, 1.0),
            "confirm_count": _number(record, "confirm_count", 0.0),
            "disconfirm_count": _number(record, "disconfirm_count", 0.0)}
    for stamp in ("created_at", "updated_at"):
        if isinstance(record.get(stamp), str):
            item[stamp] = record[stamp][:40]
    matchers, edges = [], []
    for raw in record.get("matchers") or []:
        if not isinstance(raw, dict):
            raise jsonl.Invalid("rule: each of 'matchers' must be an object")
        m_blob, m_model = _blob(raw)
        matchers.append({"id": _text(raw, "id"), "store": store, "description": _text(raw, "description"),
                         "embedding": m_blob, "model": m_model})
        edges.append({"matcher_id": raw["id"], kind.fk: item["id"], "weight": _number(raw, "weight", 1.0)})
    changes = []
    for raw in record.get("provenance") or []:
        if not isinstance(raw, dict):
            raise jsonl.Invalid("rule: each of 'provenance' must be an object")
        change = {"id": _text(raw, "id"), kind.fk: item["id"], "signal": _text(raw, "signal"),
                  "detail": _text(raw, "detail", required=False)}
        if isinstance(raw.get("created_at"), str):
            change["created_at"] = raw["created_at"][:40]
        changes.append(change)
    return {"kind": kind.name, "item": item, "matchers": matchers, "edges": edges, "provenance": changes}


def write(conn: sqlite3.Connection, rules: list[dict[str, Any]]) -> int:
    """Add the rules that are missing (inside the caller's transaction); returns how many were added."""
    if not rules:
        return 0
    table.ensure_tables(conn)
    added = 0
    for rule in rules:
        kind = kind_named(rule["kind"])
        if not table.insert_rows(conn, kind, "items", [rule["item"]]):
            continue  # already here: its confidence and history stay as they are
        added += 1
        table.insert_rows(conn, kind, "matchers", rule["matchers"])
        table.insert_rows(conn, kind, "edges", rule["edges"])
        table.insert_rows(conn, kind, "provenance", rule["provenance"])
    return added
