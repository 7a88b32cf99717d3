"""`thatch dedup keep | mark | list`: verdicts on near-duplicate pairs, so
`duplicates` and `hygiene` stop reporting them (ops/dedup.py)."""

from __future__ import annotations

from typing import Annotated

from ..ops.context import Context
from ..support import validate
from .declare import Argument, Json, Option, Store, command, group
from .output import Output
from .render import Column, table

DEDUP = group("dedup", "Verdicts on near-duplicate pairs, so duplicates and hygiene stop reporting them.")

VERDICT_KEYS = "store, status, checked_at, previous (the verdict it replaced, or null), a, b (briefs)"

LabelA = Annotated[str, Argument(metavar="LABEL_A", help="One memory of the pair (label or slug).")]
LabelB = Annotated[str, Argument(metavar="LABEL_B", help="The other memory of the pair.")]


@command("keep", group=DEDUP, examples=['thatch dedup keep "Staging port" "Production port"'],
         json=VERDICT_KEYS)
def dedup_keep(ctx: Context, out: Output, *, label_a: LabelA, label_b: LabelB, store: Store = None,
               as_json: Json = False) -> None:
    """Record that two similar memories are distinct and both worth keeping.

    Records the status "distinct": both are worth keeping, without saying
    how they relate (`dedup mark` says that: supplement, unrelated, ...).
    The verdict lasts until either memory is overwritten or forgotten."""
    from ..ops.dedup import keep_both

    _verdict(out, keep_both(ctx, label_a, label_b, store=store))


@command("mark", group=DEDUP, examples=[
    'thatch dedup mark "Deploy steps" "Deploy checklist" --status duplicate',
    'thatch dedup mark "Port 5433" "Port 5432" --status contradiction --store acme/widget',
], json=VERDICT_KEYS)
def dedup_mark(
    ctx: Context, out: Output, *, label_a: LabelA, label_b: LabelB,
    status: Annotated[str, Option("--status", show_default=False, choices=validate.VERDICTS,
                                  help="How the two memories relate: duplicate, supplement, contradiction or unrelated.")],
    store: Store = None, as_json: Json = False,
) -> None:
    """Record a verdict on a similar pair: duplicate, supplement, contradiction or unrelated.

    The pair is no longer reported by duplicates or hygiene until either
    memory is overwritten or forgotten."""
    from ..ops.dedup import mark

    _verdict(out, mark(ctx, label_a, label_b, status, store=store))


@command("list", group=DEDUP, examples=["thatch dedup list", "thatch dedup list --global"],
         json="store, verdicts (slug_a, label_a, slug_b, label_b, status, checked_at)")
def dedup_list(ctx: Context, out: Output, *, store: Store = None, as_json: Json = False) -> None:
    """List the recorded dedup verdicts of a store."""
    from ..ops.dedup import list_verdicts

    found = list_verdicts(ctx, store)
    if out.json_mode:
        out.json(found.to_json())
        return
    if not found.rows:
        out.line(f"No dedup verdicts in {found.store}.")
        return
    if out.rich:
        table(out, [Column("status", whole=True), Column("memory", "label", give=1, least=16),
                    Column("memory", "label", give=1, least=16), Column("checked", "dim", whole=True)],
              [(row["status"], row["label_a"] or row["slug_a"], row["label_b"] or row["slug_b"],
                row["checked_at"][:10]) for row in found.rows])
        return
    for row in found.rows:
        out.line(f"{row['status']}\t{row['label_a'] or row['slug_a']}\t{row['label_b'] or row['slug_b']}"
                 f"\t{row['checked_at']}")


def _verdict(out: Output, v) -> None:
    if out.json_mode:
        out.json(v.to_json())
        return
    was = f" (was {v.previous})" if v.previous and v.previous != v.status else ""
    out.line(f"Marked {v.a.label!r} and {v.b.label!r} in {v.store} as {v.status}{was};"
             " duplicates and hygiene will not report the pair again until one of them changes.")
