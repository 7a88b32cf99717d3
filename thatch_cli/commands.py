"""Command implementations: parse nothing, validate through the core, render.

Each takes (ctx, out, **options) with the option names the CLI declares in
cli.py. They import no Typer, so the fast dispatcher can call them directly.
"""

from __future__ import annotations

import sys

from . import render
from .context import Context
from .errors import InvalidInput
from .output import Output


def _read_content(value: str) -> str:
    if value != "-":
        return value
    if sys.stdin is None or sys.stdin.closed:
        raise InvalidInput("no standard input to read")
    return sys.stdin.read()


def remember(ctx: Context, out: Output, *, first: str, second: str | None, store: str | None, branch: str | None,
             this_branch: bool, confidence: int | None, overwrite: bool, archived: bool | None,
             as_json: bool) -> None:
    from .remember import remember as save

    label, content = (None, first) if second is None else (first, second)
    outcome = save(ctx, _read_content(content), label, store=store, branch=branch, this_branch=this_branch,
                   confidence=confidence, overwrite=overwrite, archived=archived)
    render.remember(out, outcome)


def recall(ctx: Context, out: Output, *, query: str, store: str | None, all_stores: bool, branch: str | None,
           limit: int, include_archived: bool, mode: str, budget: int | None, as_json: bool) -> None:
    from .recall import recall as find
    from .render_recall import recall as show

    if store and all_stores:
        raise InvalidInput("use either --store or --all-stores, not both")
    if budget is not None and budget < 1:
        raise InvalidInput(f"budget must be a positive number of characters, got {budget}")
    outcome = find(ctx, query, store=store, all_stores=all_stores, branch=branch, limit=limit,
                   include_archived=include_archived, mode=mode.lower())
    show(out, outcome, budget)


def list_(ctx: Context, out: Output, *, store_arg: str | None, store: str | None, branch: str | None,
          archived: bool, as_json: bool) -> None:
    from .manage import list_memories

    if store_arg and store and store_arg != store:
        raise InvalidInput("give the store either as an argument or with --store, not both")
    name, memories = list_memories(ctx, store_arg or store, branch=branch, archived=archived)
    render.listing(out, name, memories)


def show(ctx: Context, out: Output, *, label: str, store: str | None, as_json: bool) -> None:
    from .manage import show as find

    render.show(out, find(ctx, label, store))


def forget(ctx: Context, out: Output, *, label: str, store: str | None, as_json: bool) -> None:
    from .manage import forget as delete

    render.forgot(out, delete(ctx, label, store))


def stores(ctx: Context, out: Output, *, as_json: bool) -> None:
    from .manage import stores as summaries

    render.stores(out, summaries(ctx))


def reindex(ctx: Context, out: Output, *, store: str | None, as_json: bool) -> None:
    from .reindex import reindex as run

    progress = None
    if out.rich_stderr and not out.json_mode:
        from .progress import ProgressBar

        progress = ProgressBar("Embedding")
    try:
        outcome = run(ctx, store, progress=progress)
    finally:
        if progress:
            progress.close()
    render.reindexed(out, outcome)
