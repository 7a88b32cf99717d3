"""What a person sees and removes of the learned rules (`thatch rules`):
every prediction and behavior with its situations, confidence, evidence
count, store and last change; one with its whole provenance; forgetting
one. Rules are named by id (a unique prefix of 4+ characters will do) or
by their exact statement; a name that matches nothing gets a did-you-mean.
"""

from __future__ import annotations

from ..storage import rules as table
from ..storage.rules import KINDS, Kind
from ..support.errors import InvalidInput, NotFound
from ..support.suggest import close, did_you_mean
from . import scope
from .context import Context
from .rules import kind_named, summary

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MIN_PREFIX = 4


def _kinds(kind: str | None) -> tuple[Kind, ...]:
    return KINDS if kind is None else (kind_named(kind),)


def every(ctx: Context, store: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
    """The rules of `store` (every store when None), predictions first, most confident first."""
    stores = None if store is None else [scope.existing(ctx, store)]
    conn = ctx.db().conn
    return [summary(k, row, matchers=table.matchers_of_item(conn, k, row["id"]))
            for k in _kinds(kind) for row in table.items(conn, k, stores)]


def find(ctx: Context, ref: str) -> tuple[Kind, dict[str, Any]]:
    """The rule `ref` names: its id, a unique id prefix or its exact statement."""
    ref = ref.strip()
    if not ref:
        raise InvalidInput("give a rule's id (or its exact statement); `thatch rules list` shows them")
    conn = ctx.db().conn
    candidates = [(k, row) for k in KINDS for row in table.items(conn, k)]
    for matches in ([c for c in candidates if c[1]["id"] == ref],
                    [c for c in candidates if c[1]["statement"] == ref],
                    [c for c in candidates if len(ref) >= MIN_PREFIX and c[1]["id"].startswith(ref.lower())]):
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            ids = ", ".join(row["id"][:12] for _, row in matches[:5])
            raise InvalidInput(f"{ref!r} names {len(matches)} rules ({ids}); give more of the id")
    names = [row["id"][:8] for _, row in candidates] + [row["statement"][:80] for _, row in candidates]
    raise NotFound(f"no learned rule {ref!r}{did_you_mean(close(ref, names))}")


def show(ctx: Context, ref: str) -> dict[str, Any]:
    """One rule with its situations and every provenance row, newest first."""
    kind, row = find(ctx, ref)
    conn = ctx.db().conn
    return summary(kind, row, created_at=row["created_at"], matchers=table.matchers_of_item(conn, kind, row["id"]),
                   provenance=table.provenance(conn, kind, row["id"], limit=None))


def forget(ctx: Context, ref: str) -> dict[str, Any]:
    """Delete one rule with its links and provenance; returns it as it was."""
    found = show(ctx, ref)
    kind = kind_named(found["kind"])
    with ctx.db().transaction() as conn:
        table.delete_item(conn, kind, found["id"])
    return found
