"""`thatch search QUERY [STORE|all]`: the original thatch's spelling of
recall, kept so its users' habits (and scripts) work. It is recall: the
same ranking, scope rules, telemetry and output (cli/recall.py)."""

from __future__ import annotations

from typing import Annotated, Optional

from ..context import Context
from .declare import Argument, Json, command
from .output import Output
from .recall import AllBranches, Limit, Mode

ALL = "all"


@command("search", examples=[
    'thatch search "how do I publish a release?"',
    'thatch search "staging port" acme/widget',
    'thatch search "python style" all          # every store',
], json="the same as recall")
def search(
    ctx: Context, out: Output, *,
    query: Annotated[str, Argument(metavar="QUERY", help="What you are looking for, in your own words.")],
    where: Annotated[Optional[str], Argument(metavar="STORE", show_default=False,
                                             help="Search only this store, or every store with 'all'"
                                                  " (default: the detected store plus global).")] = None,
    limit: Limit = None,
    mode: Mode = "hybrid",
    all_branches: AllBranches = False,
    as_json: Json = False,
) -> None:
    """Find memories: `thatch recall` as the original thatch spells it, with the store as an argument."""
    from ..ops.recall import recall as find
    from .recall import show

    everywhere = where is not None and where.strip().lower() == ALL
    outcome = find(ctx, query, store=None if everywhere else where, all_stores=everywhere, limit=limit, mode=mode,
                   all_branches=all_branches)
    show(out, outcome)
