"""Reading and removing memories: list, show, forget, stores.

These run on every light command, so nothing here may import numpy,
torch or sentence-transformers."""

from __future__ import annotations

from .context import Context
from .models import Memory, StoreSummary
from .scope import check_store_name, lookup


def list_memories(
    ctx: Context, store: str | None = None, *, branch: str | None = None, archived: bool = False
) -> tuple[str, list[Memory]]:
    name = check_store_name(store) if store else ctx.default_store()
    return name, ctx.db().list([name], branch=branch, archived=archived)


def show(ctx: Context, label: str, store: str | None = None) -> Memory:
    return lookup(ctx, label, store)


def forget(ctx: Context, label: str, store: str | None = None) -> Memory:
    memory = lookup(ctx, label, store)
    return ctx.db().delete(memory.store, memory.slug)


def stores(ctx: Context) -> list[StoreSummary]:
    return ctx.db().store_summaries()
