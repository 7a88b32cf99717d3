"""`thatch recall`: find memories by meaning and by their words (the
operation is ops/recall.py), shown within an optional character budget.

`--budget CHARS` caps what recall writes to stdout, for agents that paste it
into a context window. Results are kept best first while they fit and the
rest are left out whole: a JSON record is never cut, the document stays
valid, and `budget.omitted` says how many were dropped. The envelope
(query, stores, notices) always stays, so a budget smaller than it yields no
results rather than broken output.
"""

from __future__ import annotations

import json
from typing import Annotated, Optional

from .. import validate
from ..context import Context
from .declare import Argument, Json, Option, command
from .output import Output
from .render import esc, table


@command("recall", examples=[
    'thatch recall "how do I publish a new version?"',
    'thatch recall "ERR_CONN_RESET" --mode lexical',
    'thatch recall "staging port" --global',
    'thatch recall "deploy" | cut -f3     # the labels',
    'thatch recall "deploy" --json --budget 4000',
], json="query, stores, branch, mode, results (brief plus score, match, scores, snippet, content), notices,"
        " budget (chars, omitted; null without --budget)")
def recall(
    ctx: Context, out: Output, *,
    query: Annotated[str, Argument(metavar="QUERY", help="What you are looking for, in your own words.")],
    store: Annotated[Optional[str], Option("--store", "-s", metavar="STORE", help="Search only this store.")] = None,
    all_stores: Annotated[bool, Option("--all-stores", "-a", help="Search every store.")] = False,
    branch: Annotated[Optional[str], Option("--branch", "-b", metavar="BRANCH",
                                            help="Include this branch's memories instead of the current branch's.")] = None,
    this_branch: Annotated[bool, Option("--this-branch",
                                        help="Include the current branch's memories (the default).")] = False,
    limit: Annotated[int, Option("--limit", "-n", help="Most results to show.")] = 10,
    include_archived: Annotated[bool, Option("--include-archived", help="Search archived memories too.")] = False,
    mode: Annotated[str, Option("--mode", "-m", choices=validate.MODES,
                                help="Ranking: hybrid (meaning and exact words), semantic or lexical.")] = "hybrid",
    budget: Annotated[Optional[int], Option("--budget", metavar="CHARS",
                                            help="Cap the output at CHARS characters, dropping whole results.")] = None,
    as_json: Json = False,
) -> None:
    """Find memories by meaning and by their words: the detected store plus global, unless told otherwise.

    On a terminal, a table. Piped, one result per line, tab-separated: score, store, label, branch, snippet (`cut -f3` gives the labels)."""
    from ..ops.recall import recall as find
    from ..ops.scope import branch_choice

    budget = validate.budget(budget)
    if this_branch:
        branch = branch_choice(ctx, branch, this_branch)
    outcome = find(ctx, query, store=store, all_stores=all_stores, branch=branch, limit=limit,
                   include_archived=include_archived, mode=mode)
    show(out, outcome, budget)


def fit_json(outcome, budget: int | None) -> dict:
    """The JSON document, holding as many results (best first) as fit in `budget` characters."""
    records = [r.to_json(outcome.mode) for r in outcome.results]
    if budget is None:
        return {**outcome.to_json(records), "budget": None}

    def document(kept: int) -> dict:
        return {**outcome.to_json(records[:kept]), "budget": {"chars": budget, "omitted": len(records) - kept}}

    # Grow by each record's indented size (cheap), then confirm on the real
    # serialisation: the omitted count and separators shift it by a few characters.
    used = len(Output.dumps(document(0)))
    kept = 0
    for rec in records:
        text = json.dumps(rec, ensure_ascii=False, indent=2)
        size = len(text) + 4 * (text.count("\n") + 1) + 4
        if used + size > budget:
            break
        used += size
        kept += 1
    while kept and len(Output.dumps(document(kept))) > budget:
        kept -= 1
    return document(kept)


def _plain_blocks(outcome) -> list[str]:
    """One line per result, the table's columns tab-separated: score, store, label, branch, snippet."""
    from ..ops.recall import snippet
    from ..textsafe import one_line

    return ["\t".join([f"{r.score:.3f}", *(one_line(f) for f in (r.memory.store, r.memory.label,
                                                                   r.memory.branch or "", snippet(r.memory)))]) + "\n"
            for r in outcome.results]


def show(out: Output, outcome, budget: int | None = None) -> None:
    if out.json_mode:
        out.json(fit_json(outcome, budget))
        return
    for notice in outcome.notices:
        out.notice(notice)
    if not outcome.results:
        out.notice(f"no memories match in {', '.join(outcome.stores)}")
        return
    blocks = _plain_blocks(outcome)
    kept = len(blocks)
    if budget is not None:
        used, kept = 0, 0
        for block in blocks:
            if used + len(block) > budget:
                break
            used, kept = used + len(block), kept + 1
        if kept < len(blocks):
            out.notice(f"{len(blocks) - kept} more result{'s' if len(blocks) - kept != 1 else ''}"
                       f" left out to stay within --budget {budget}")
    if out.rich:
        from ..ops.recall import snippet

        rows = [(f"{r.score:.2f}", esc(r.memory.store), f"[bold]{esc(r.memory.label)}[/]",
                 esc(r.memory.branch or ""), esc(snippet(r.memory, 80))) for r in outcome.results[:kept]]
        if rows:
            table(out, ("score", "store", "label", "branch", "snippet"), rows)
        return
    out.stdout.write("".join(blocks[:kept]))
