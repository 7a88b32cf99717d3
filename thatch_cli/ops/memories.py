"""Reading and removing memories: list, show, forget, stores.

These run on every light command, so nothing here may import numpy,
torch or sentence-transformers."""

from __future__ import annotations

from .. import validate
from ..context import Context
from ..records import Memory, StoreSummary
from .scope import lookup, target


class Listing:
    __slots__ = ("store", "memories")

    def __init__(self, store: str, memories: list[Memory]) -> None:
        self.store, self.memories = store, memories

    def to_json(self) -> dict:
        return {"store": self.store, "memories": [m.brief() for m in self.memories]}


def list_memories(ctx: Context, store: str | None = None, *, branch: str | None = None,
                  archived: bool = False) -> Listing:
    name = target(ctx, store)
    if branch is not None:
        branch = validate.branch(branch)
    return Listing(name, ctx.db().list([name], branch=branch, archived=archived))


def show(ctx: Context, label: str, store: str | None = None) -> Memory:
    return lookup(ctx, label, store)


def forget(ctx: Context, label: str, store: str | None = None) -> Memory:
    memory = lookup(ctx, label, store)
    return ctx.db().delete(memory.store, memory.slug)


def stores(ctx: Context) -> list[StoreSummary]:
    return ctx.db().store_summaries()
