"""`thatch search QUERY [STORE|all]`: the original thatch's spelling of
recall, kept so its users' habits (and scripts) work. Its stores are the
original's: the detected store alone, STORE alone, or with `all` the
detected store plus global. Everything else is recall's: the ranking,
the relevance floor, the branch rule, telemetry and output (cli/recall.py);
docs/original-thatch.md says where that differs from the original."""

from __future__ import annotations

from typing import Annotated, Optional

from ..ops.context import Context
from .declare import Argument, Json, command
from .output import Output
from .recall import AllBranches, Limit, Mode

ALL = "all"


@command("search", examples=[
    'thatch search "how do I publish a release?"',
    'thatch search "staging port" acme/widget',
    'thatch search "python style" all          # this project and global',
], json="the same as recall")
def search(
    ctx: Context, out: Output, *,
    query: Annotated[str, Argument(metavar="QUERY", help="What you are looking for, in your own words.")],
    where: Annotated[Optional[str], Argument(metavar="STORE", show_default=False, complete="stores",
                                             help="Search only this store, or with 'all' the detected store"
                                                  " plus global (default: the detected store).")] = None,
    limit: Limit = None,
    mode: Mode = "hybrid",
    all_branches: AllBranches = False,
    as_json: Json = False,
) -> None:
    """Find memories: `thatch recall` as the original thatch spells it, with the original's stores.

    Without STORE it searches the detected store alone; with 'all', the
    detected store and global (recall's default)."""
    from ..ops.recall import recall as find
    from .recall import show

    both = where is not None and where.strip().lower() == ALL
    outcome = find(ctx, query, store=None if both else where, project_only=where is None, limit=limit, mode=mode,
                   all_branches=all_branches)
    show(out, outcome)
