"""Learned rules: the original thatch's user decision model (predictions)
and the agent's situational behaviors, on its tables (storage/rules.py).

A matcher describes a situation; an item (a prediction or a behavior) says
what holds in it. `update` (prediction_update) and `codify`
(behavior_codify) reuse a matcher or item that means the same (calibrated
passage score 0.85, rules_match.py) rather than adding a second; signals
move an item's Bayesian confidence (storage/rules.py: K 5, P0 0.5, soft
0.25) and every change leaves a provenance row. `query` and `fire` rank
items for a situation: the matcher's calibrated score (query kind) at or
above the threshold, times the edge's weight and the item's confidence.

Rules follow the store rules of memories: the project's store by default,
`global` for what holds everywhere. Default behaviors live in global.
"""

from __future__ import annotations

from ..storage import rules as table
from ..storage.rules import BEHAVIORS, PREDICTIONS, Kind
from ..support.errors import InvalidInput, NotFound
from . import scope
from .context import Context
from .rules_match import FIRE_LIMIT, MATCH_THRESHOLD, Space, nearest, ranked, vector

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook fires rules through here (~2 ms)
if TYPE_CHECKING:
    from typing import Any

UPDATE_SIGNALS = ("confirm", "disconfirm", "soft", "create")
BY_NAME = {kind.name: kind for kind in (PREDICTIONS, BEHAVIORS)}


def kind_named(name: str) -> Kind:
    try:
        return BY_NAME[name]
    except KeyError:
        raise InvalidInput(f"unknown kind {name!r} ({' or '.join(BY_NAME)})") from None


def space_of(ctx: Context, model: str, dim: int) -> Space:
    engine = ctx.engine()
    return Space(model, dim, engine.calibration(), lambda texts: engine.embed_passages(texts).blobs)


def _passages(ctx: Context, texts: list[str]) -> tuple[Space, list[bytes]]:
    embedded = ctx.engine().embed_passages(texts)
    return space_of(ctx, embedded.model, embedded.dim), embedded.blobs


def summary(kind: Kind, row: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An item as every answer shows it (the --json keys)."""
    return {"kind": kind.name, "id": row["id"], "store": row["store"], "statement": row["statement"],
            "rationale": row.get("rationale"), "confidence": round(float(row["confidence"]), 3),
            "confirm_count": row["confirm_count"], "disconfirm_count": row["disconfirm_count"],
            "evidence_count": round(row["confirm_count"] + row["disconfirm_count"]),
            "updated_at": row.get("updated_at"), **extra}


def _find_or_create_matcher(ctx: Context, conn, kind: Kind, store: str, space: Space, text: str,
                            blob: bytes) -> str:
    rows = table.matchers(conn, kind, [store])
    found = nearest(space, vector(blob), [(r[2], r[3], r[4]) for r in rows])
    if found is not None:
        return rows[found][0]
    return table.create_matcher(conn, kind, store, text, blob, space.model)


def _nearest_item(conn, kind: Kind, store: str, space: Space, blob: bytes) -> dict[str, Any] | None:
    rows = table.items(conn, kind, [store], with_vector=True)
    found = nearest(space, vector(blob), [(r["statement"], r["embedding"], r["model"]) for r in rows])
    return rows[found] if found is not None else None


def record(ctx: Context, kind: Kind, situation: str, statement: str, signal: str, rationale: str,
           store: str | None = None) -> dict[str, Any]:
    """prediction_update (kind PREDICTIONS) and behavior_codify (BEHAVIORS,
    signal "create" as the original's "codify"): find or add the matcher
    and the item, link them, apply the signal. `action` says what happened:
    created, linked (an existing item, newly or again linked; confidence
    unchanged) or the signal applied."""
    if signal not in UPDATE_SIGNALS:
        raise InvalidInput(f"signal must be one of {', '.join(UPDATE_SIGNALS)}, not {signal!r}")
    for what, text in (("situation", situation), ("statement", statement)):
        if not text.strip():
            raise InvalidInput(f"the {what} is empty")
    store = scope.target(ctx, store, create=True)
    space, (situation_blob, statement_blob) = _passages(ctx, [situation, statement])
    created_signal = "codify" if kind is BEHAVIORS else "create"
    db = ctx.db()
    with db.transaction() as conn:
        table.ensure_tables(conn)
        matcher_id = _find_or_create_matcher(ctx, conn, kind, store, space, situation, situation_blob)
        existing = _nearest_item(conn, kind, store, space, statement_blob)
        if existing is None:
            item_id = table.create_item(conn, kind, store, statement, rationale, statement_blob, space.model)
            table.create_edge(conn, kind, matcher_id, item_id)
            action = "created"
        else:
            item_id = existing["id"]
            table.create_edge(conn, kind, matcher_id, item_id)
            action = "linked"
        if signal == "create":
            table.add_provenance(conn, kind, item_id, created_signal, rationale)
        else:
            table.adjust(conn, kind, item_id, signal)
            table.add_provenance(conn, kind, item_id, signal, rationale)
            action = f"created+{signal}" if action == "created" else signal
        row = table.item(conn, kind, item_id)
    assert row is not None
    return summary(kind, row, action=action, situation=situation)


def _located(ctx: Context, kind: Kind, statement: str, store: str | None) -> tuple[str, dict[str, Any]]:
    """The item of `store` (default: the detected one) that means `statement`, or NotFound."""
    store = scope.target(ctx, store, create=True)
    space, (blob,) = _passages(ctx, [statement])
    found = _nearest_item(ctx.db().conn, kind, store, space, blob)
    if found is None:
        listing = "prediction_list" if kind is PREDICTIONS else "behavior_list"
        raise NotFound(f"no {kind.name} in {store!r} means {statement!r} (see {listing} or `thatch rules`)")
    return store, found


def feedback(ctx: Context, behavior: str, relevant: bool, context: str, store: str | None = None) -> dict[str, Any]:
    """behavior_feedback: ham (relevant) confirms, spam disconfirms."""
    _, found = _located(ctx, BEHAVIORS, behavior, store)
    signal = "confirm" if relevant else "disconfirm"
    with ctx.db().transaction() as conn:
        table.adjust(conn, BEHAVIORS, found["id"], signal)
        table.add_provenance(conn, BEHAVIORS, found["id"], signal, f"{'ham' if relevant else 'spam'}: {context}")
        row = table.item(conn, BEHAVIORS, found["id"])
    assert row is not None
    return summary(BEHAVIORS, row, action=signal)


def delete(ctx: Context, kind: Kind, statement: str, store: str | None = None) -> dict[str, Any]:
    """prediction_delete / behavior_delete: the item meaning `statement`, with its edges and provenance."""
    _, found = _located(ctx, kind, statement, store)
    with ctx.db().transaction() as conn:
        table.delete_item(conn, kind, found["id"])
    return summary(kind, found, action="deleted")


def listing(ctx: Context, kind: Kind, stores: list[str], *, provenance: bool = True) -> list[dict[str, Any]]:
    """Every item of `stores`, most confident first, with its matchers (and provenance)."""
    conn = ctx.db().conn
    out = []
    for row in table.items(conn, kind, stores):
        extra: dict[str, Any] = {"matchers": table.matchers_of_item(conn, kind, row["id"])}
        if provenance:
            extra["provenance"] = table.provenance(conn, kind, row["id"])
        out.append(summary(kind, row, **extra))
    return out


def store_of(ctx: Context, store: str | None) -> str:
    return scope.target(ctx, store, create=True)


def default_stores(ctx: Context, store: str | None) -> list[str]:
    """`store` alone when given, else the detected store and global (the original's query and auto-fire)."""
    if store is not None:
        return [scope.target(ctx, store, create=True)]
    detected = scope.detected(ctx)
    return [detected] if detected == scope.GLOBAL else [detected, scope.GLOBAL]


def scored(conn, kind: Kind, space: Space, query: bytes, stores: list[str], threshold: float,
           limit: int = FIRE_LIMIT) -> list[dict[str, Any]]:
    """The items of the best `limit` matchers at or above `threshold`: score
    = matcher score x edge weight x confidence, best first, each item once."""
    rows = table.matchers(conn, kind, stores)
    hits = ranked(space, vector(query), [(r[2], r[3], r[4]) for r in rows], "query", threshold)[:limit]
    if not hits:
        return []
    by_id = {rows[i][0]: (rows[i][2], score) for i, score in hits}
    found = []
    for edge in table.edges_of_matchers(conn, kind, list(by_id)):
        description, score = by_id[edge["matcher_id"]]
        found.append(summary(kind, edge, matcher=description, matcher_score=score,
                             score=round(score * edge["weight"] * edge["confidence"], 3)))
    found.sort(key=lambda s: -s["score"])
    unique: dict[str, dict[str, Any]] = {}
    for item in found:
        unique.setdefault(item["id"], item)  # best first, so the first is an item's best matcher
    return list(unique.values())[:limit]


def query(ctx: Context, context: str, store: str | None = None,
          threshold: float = MATCH_THRESHOLD) -> list[dict[str, Any]]:
    """prediction_query: the predictions for a situation."""
    stores = default_stores(ctx, store)
    embedded = ctx.engine().embed_query(context)
    space = space_of(ctx, embedded.model, embedded.dim)
    return scored(ctx.db().conn, PREDICTIONS, space, embedded.blobs[0], stores, threshold)
