"""Which store(s) an operation works on, and finding a memory by label."""

from __future__ import annotations

from .. import validate
from ..context import Context
from ..errors import InvalidInput, NotFound
from ..location.scope import GLOBAL, default_scope
from ..records import Memory
from ..slugs import slugify


def target(ctx: Context, store: str | None) -> str:
    """--store when given, else the detected store."""
    return validate.store(store) if store is not None else detected(ctx)


def detected(ctx: Context) -> str:
    """The detected store (THATCH_STORE, origin's owner/repo, the directory's
    name), refused when it cannot be a store name: a remote URL or directory
    name with a control character must never become a store."""
    place = ctx.place()
    try:
        return validate.store(place.store)
    except InvalidInput as exc:
        source = "THATCH_STORE" if place.overridden else "the origin remote's URL or the directory name"
        raise InvalidInput(f"the store detected from {source} is not usable ({exc.message});"
                           " pass --store NAME") from None


def search_scope(ctx: Context, store: str | None, all_stores: bool) -> list[str]:
    """--store S searches only S; --all-stores every store; otherwise the
    detected store plus global, the original's default scope."""
    validate.one_of(**{"--store": store, "--all-stores": all_stores})
    if all_stores:
        return ctx.db().store_names()
    if store is not None:
        return [validate.store(store)]
    return default_scope(ctx.place())


def lookup(ctx: Context, label: str, store: str | None) -> Memory:
    """A memory by label (or slug). Without a store, the detected store is
    tried first, then global, so anything recall shows can be opened."""
    slug = slugify(label)
    candidates = [validate.store(store)] if store is not None else default_scope(ctx.place())
    db = ctx.db()
    for name in candidates:
        memory = db.get(name, slug) or (db.get(name, label) if label != slug else None)
        if memory is not None:
            return memory
    where = " or ".join(candidates)
    raise NotFound(f"no memory labelled {label!r} in {where}", label=label, stores=candidates)


__all__ = ["GLOBAL", "detected", "lookup", "search_scope", "target"]
