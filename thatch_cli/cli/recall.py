"""`thatch recall`: find memories by meaning and by their words (the
operation is ops/recall.py), shown within an optional character budget.

The query is every word after the options, joined by spaces, so `thatch
recall staging db port` needs no quotes (as `z` and `gh search` do).

Results score at least the relevance floor (setting recall.floor,
--floor); weaker matches are left out, or listed apart with --show-weak.

`--budget CHARS` caps what recall writes to stdout, for agents that paste it
into a context window: every character counts, the final newline included
(Unicode characters, not bytes; notices on stderr do not count). JSON is
then one compact line, so the budget goes to results rather than
indentation. Results are kept best first while they fit (weak matches, when
asked for, after them) and the rest are left out whole: a JSON record is
never cut, the document stays valid, and `budget.omitted` says how many were
dropped. The envelope (query, stores, notices) always stays, so a budget
smaller than it yields no results rather than broken output.
"""

from __future__ import annotations

from typing import Annotated, Optional

from ..ops.context import Context
from ..support import validate
from .declare import Argument, Filtered, Json, Option, command
from .output import Output
from .render import Column, label_text, table

# Shared with `search`, the original thatch's spelling of recall.
Limit = Annotated[Optional[int], Option("--limit", "-n", metavar="N", show_default=False,
                                        help="Most results to show (default: setting recall.limit, 10).")]
Mode = Annotated[str, Option("--mode", "-m", choices=validate.MODES,
                             help="Ranking: hybrid (meaning and exact words), semantic or lexical.")]
AllBranches = Annotated[bool, Option("--all-branches", help="Include the memories of every branch (each result"
                                                            " names its branch).")]


@command("recall", examples=[
    'thatch recall "how do I publish a new version?"',
    'thatch recall "ERR_CONN_RESET" --mode lexical',
    'thatch recall "staging port" --global',
    'thatch recall "login form" --all-branches',
    'thatch recall "deploy" | cut -f3     # the labels',
    'thatch recall "deploy" --json --budget 4000',
    'thatch recall --file src/config.py      # the memories anchored to that file',
], json="query, stores, branch, all_branches, mode (hybrid, semantic, lexical; anchored for --file alone), floor,"
        " results (brief plus score, match, scores, snippet,"
        " content, anchors, drift: one line per anchor whose code moved, changed or is gone), weak_count, weak,"
        " notices, elsewhere (when nothing matched: the other stores that match,"
        " store: count, {} for none; null when something matched or every store was searched),"
        " budget (chars, omitted; null without --budget)")
def recall(
    ctx: Context, out: Output, *,
    query: Annotated[Optional[list[str]], Argument(metavar="QUERY...", show_default=False,
                                                   help="What you are looking for, in your own words (no quotes"
                                                        " needed).")] = None,
    store: Annotated[Optional[str], Option("--store", "-s", metavar="STORE", help="Search only this store.")] = None,
    all_stores: Annotated[bool, Option("--all-stores", "-a", help="Search every store.")] = False,
    branch: Annotated[Optional[str], Option("--branch", "-b", metavar="BRANCH",
                                            help="Include this branch's memories instead of the current branch's.")] = None,
    this_branch: Annotated[bool, Option("--this-branch",
                                        help="Include the current branch's memories (the default).")] = False,
    all_branches: AllBranches = False,
    limit: Limit = None,
    include_archived: Annotated[bool, Option("--include-archived", help="Search archived memories too.")] = False,
    mode: Mode = "hybrid",
    floor: Annotated[Optional[float], Option("--floor", metavar="SCORE", show_default=False,
                                             help="Leave out matches scoring below SCORE, 0-1"
                                                  " (default: setting recall.floor, 0.35; 0 shows all).")] = None,
    show_weak: Annotated[bool, Option("--show-weak",
                                      help="Also list the matches below the floor, apart (never counted as recalled).")
                         ] = False,
    budget: Annotated[Optional[int], Option("--budget", metavar="CHARS",
                                            help="Cap stdout at CHARS characters, dropping whole results"
                                                 " (JSON becomes one compact line).")] = None,
    file: Annotated[Optional[list[str]], Option("--file", "-f", metavar="PATH", show_default=False,
                                                help="Only memories anchored to this file or directory (repeatable);"
                                                     " without a query, all of them.")] = None,
    filtered: Filtered = None,
    as_json: Json = False,
) -> None:
    """Find memories by meaning and by their words: the detected store plus global, unless told otherwise.

    Every result has a score from 0 to 1 on the same scale in every mode;
    matches below the relevance floor (setting recall.floor) are left out
    and not counted as recalled. On a terminal, a table. Piped, one result
    per line, tab-separated: score, store, label, branch, snippet (`cut -f3`
    gives the labels).

    A memory anchored to code (thatch anchor) whose code has since changed, moved or gone is marked, e.g. "[the code it describes changed since abc1234: 12 of 36 lines (src/config.py:40-75)]": treat what it says with doubt."""
    from ..ops.recall import recall as find
    from ..ops.scope import branch_choice

    budget = validate.budget(budget)
    validate.one_of(**{"--this-branch": this_branch, "--all-branches": all_branches})
    if this_branch:
        branch = branch_choice(ctx, branch, this_branch)
    if not query and not file:
        from ..support.errors import InvalidInput

        raise InvalidInput("missing QUERY: say what you are looking for, or give --file PATH")
    outcome = find(ctx, " ".join(query or []), files=file, store=store, all_stores=all_stores, branch=branch, limit=limit,
                   include_archived=include_archived, mode=mode, floor=floor, all_branches=all_branches, fields=filtered)
    show(out, outcome, budget, show_weak)


def fit_json(outcome, budget: int | None, show_weak: bool = False) -> dict:
    """The JSON document, holding as many results (best first, then weak
    matches when asked for) as fit in `budget` characters of compact JSON
    (support/fitting.py: whole records only)."""
    from ..support.fitting import most

    records = [r.to_json(outcome.mode) for r in outcome.results]
    weak = [r.to_json(outcome.mode) for r in outcome.weak] if show_weak else None
    if budget is None:
        return {**outcome.to_json(records, weak), "budget": None}
    pool = records + (weak or [])

    def document(kept: int) -> dict:
        kept_weak = None if weak is None else weak[:max(0, kept - len(records))]
        return {**outcome.to_json(records[:kept], kept_weak),
                "budget": {"chars": budget, "omitted": len(pool) - kept}}

    return document(most(len(pool), lambda kept: len(Output.dumps(document(kept), compact=True)) <= budget))


def _block(r) -> str:
    """One result on one line, the table's columns tab-separated: score, store, label, branch, snippet."""
    from ..ops.recall import snippet
    from ..support.textsafe import one_line

    return "\t".join([f"{r.score:.3f}", *(one_line(f) for f in (r.memory.store, r.memory.label,
                                                                r.memory.branch or "", _by(r.memory) + _drift(r) + snippet(r.memory)))]) + "\n"


def _drift(r) -> str:
    """What became of the code the memory describes, when it drifted."""
    return "".join(f"[{line}] " for line in r.drift)


def _by(memory) -> str:
    """Whose memory it is, when a teammate shared it (thatch sync)."""
    from ..support.agent_text import authorship

    shared = authorship(memory)
    return f"[{shared}] " if shared else ""


def _weak_header(outcome) -> str:
    return f"Weak matches (below the floor {outcome.floor:g}, not counted as recalled):\n"


def show(out: Output, outcome, budget: int | None = None, show_weak: bool = False) -> None:
    if out.json_mode:
        out.json(fit_json(outcome, budget, show_weak), compact=budget is not None)
        return
    for notice in outcome.notices:
        out.notice(notice)
    weak = outcome.weak if show_weak else []
    if not outcome.results:
        out.notice(f"no memories match well enough in {', '.join(outcome.stores)}")
        if outcome.weak and not show_weak:
            count = len(outcome.weak)
            out.notice(f"{count} weaker match{'es' if count != 1 else ''} below the floor {outcome.floor:g}"
                       " left out (--show-weak lists them)")
        if outcome.elsewhere:
            out.notice(elsewhere_line(outcome.elsewhere))
    blocks = [_block(r) for r in outcome.results]
    weak_blocks = [_block(r) for r in weak]
    kept, kept_weak = len(blocks), len(weak_blocks)
    if budget is not None:
        kept, kept_weak = _fit_plain(out, blocks, weak_blocks, budget)
    if out.rich:
        _tables(out, outcome.results[:kept], weak[:kept_weak], outcome)
        return
    if kept_weak:  # stdout stays one result per line; where the weak ones start is said on stderr
        out.notice(f"the last {kept_weak} line{'s are' if kept_weak != 1 else ' is'} "
                   + _weak_header(outcome).strip().rstrip(":").lower())
    out.stdout.write("".join(blocks[:kept] + weak_blocks[:kept_weak]))


def elsewhere_line(counts: dict[str, int]) -> str:
    """Where else the query matches: "3 matches in other stores: acme/widget (2), acme/api (1); -a searches every store"."""
    from ..support.textsafe import one_line

    total = sum(counts.values())
    shown = list(counts.items())[:3]
    more = f", and {len(counts) - 3} more" if len(counts) > 3 else ""
    places = ", ".join(f"{one_line(store)} ({count})" for store, count in shown)
    return (f"{total} match{'es' if total != 1 else ''} in other stores: {places}{more};"
            " -a (--all-stores) searches every store")


def _fit_plain(out: Output, blocks: list[str], weak_blocks: list[str], budget: int) -> tuple[int, int]:
    """How many result lines, then weak ones, fit in `budget` characters (support/fitting.py: whole lines only)."""
    from itertools import accumulate

    from ..support.fitting import most

    ends = [0, *accumulate(len(block) for block in blocks + weak_blocks)]
    fitting_lines = most(len(blocks) + len(weak_blocks), lambda kept: ends[kept] <= budget)
    kept, kept_weak = min(fitting_lines, len(blocks)), max(0, fitting_lines - len(blocks))
    left_out = len(blocks) - kept + len(weak_blocks) - kept_weak
    if left_out:
        out.notice(f"{left_out} more result{'s' if left_out != 1 else ''} left out to stay within --budget {budget}")
    return kept, kept_weak


def _tables(out: Output, results: list, weak: list, outcome) -> None:
    from ..ops.recall import snippet

    def rows(found, weak: bool = False):
        cells = [(f"{r.score:.2f}", r.memory.store, label_text(r.memory), r.memory.branch or "",
                  _by(r.memory) + _drift(r) + snippet(r.memory, out.width)) for r in found]
        return [[(cell, "dim") for cell in row] for row in cells] if weak else cells

    columns = [Column("score", "score", whole=True, right=True), Column("store", "store", give=1, least=10),
               Column("label", "label", give=1, least=16, marks=True), Column("branch", "branch", give=1, least=8),
               Column("snippet", give=2, least=0.4)]
    if results:
        table(out, columns, rows(results))
    if weak:
        table(out, columns, rows(weak, weak=True), title=_weak_header(outcome).strip().rstrip(":"))
