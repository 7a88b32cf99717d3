"""Which stores and branch a command works on, and input limits."""

from __future__ import annotations

from .context import Context
from .errors import InvalidInput, NotFound
from .models import Memory
from .slugs import slugify

GLOBAL = "global"
MAX_STORE_CHARS = 200


def check_store_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise InvalidInput("store name is empty")
    if len(name) > MAX_STORE_CHARS or any(ord(ch) < 32 for ch in name):
        raise InvalidInput(f"invalid store name {name[:40]!r}")
    return name


def target_store(ctx: Context, store: str | None) -> str:
    return check_store_name(store) if store else ctx.default_store()


def search_stores(ctx: Context, store: str | None, all_stores: bool) -> list[str]:
    """--store S searches only S; --all-stores every store; otherwise the
    detected store plus global, the original's default scope."""
    if all_stores:
        return ctx.db().store_names()
    if store:
        return [check_store_name(store)]
    detected = ctx.default_store()
    return [detected] if detected == GLOBAL else [detected, GLOBAL]


def lookup(ctx: Context, label: str, store: str | None) -> Memory:
    """A memory by label (or slug). Without --store, the detected store is
    tried first, then global, so anything recall shows can be opened."""
    slug = slugify(label)
    candidates = [check_store_name(store)] if store else search_stores(ctx, None, False)
    db = ctx.db()
    for name in candidates:
        memory = db.get(name, slug) or (db.get(name, label) if label != slug else None)
        if memory is not None:
            return memory
    where = " or ".join(candidates)
    raise NotFound(f"no memory labelled {label!r} in {where}", label=label, stores=candidates)
