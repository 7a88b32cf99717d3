"""Which store(s) an operation works on, and finding a memory by label.

A store named explicitly (--store, a positional STORE) must exist, except
where a command creates it (remember, import): a typo is an error with a
did-you-mean, never an empty answer. The detected store (and THATCH_STORE)
may be empty: a repository without memories yet is not a mistake."""

from __future__ import annotations

from ..location.scope import GLOBAL, default_scope
from ..support import validate
from ..support.errors import InvalidInput, NotFound
from ..support.slugs import slugify

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from ..memory.records import Memory
    from .context import Context


def existing(ctx: Context, store: str) -> str:
    """`store` (checked), or NotFound naming the closest existing stores."""
    name = validate.store(store)
    db = ctx.db()
    if name == GLOBAL or db.store_exists(name):
        return name
    from ..support.suggest import close, did_you_mean

    found = close(name, db.store_names())
    raise NotFound(f"no store named {name!r}{did_you_mean(found)} ('thatch stores' lists them)",
                   store=name, suggestions=found)


def target(ctx: Context, store: str | None, *, create: bool = False) -> str:
    """--store when given (it must exist unless `create`), else the detected store."""
    if store is None:
        return detected(ctx)
    return validate.store(store) if create else existing(ctx, store)


def branch_choice(ctx: Context, branch: str | None, this_branch: bool) -> str | None:
    """--branch B (checked) or --this-branch (the checked-out branch), at most one."""
    validate.one_of(**{"--branch": branch is not None, "--this-branch": this_branch})
    if this_branch:
        branch = ctx.current_branch()
        if branch is None:
            raise InvalidInput("--this-branch needs a checked-out branch (not a detached HEAD or a non-repository)")
        return validate.branch(branch, "--this-branch, read from HEAD")
    return validate.branch(branch) if branch is not None else None


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


def search_scope(ctx: Context, store: str | None, all_stores: bool, project_only: bool = False) -> list[str]:
    """--store S searches only S; --all-stores every store; otherwise,
    with `project_only`, the detected store alone (the original's `thatch
    search QUERY`), else the detected store plus global (its MCP recall's)."""
    validate.one_of(**{"--store": store, "--all-stores": all_stores})
    if all_stores:
        return ctx.db().store_names()
    if store is not None:
        return [existing(ctx, store)]
    if project_only:
        return [detected(ctx)]
    return default_scope(ctx.place())


def lookup(ctx: Context, label: str, store: str | None, *, fallback: bool = True) -> Memory:
    """A memory by label (or slug). With --store, only there. Without, the
    detected store, then (with `fallback`, for reading) global, so anything
    recall shows can be opened. Writes pass fallback=False: they never reach
    into another store unasked. Not found names the closest labels and any
    other store that has the memory."""
    slug = slugify(label)
    if store is not None:
        candidates = [existing(ctx, store)]
    else:
        candidates = default_scope(ctx.place()) if fallback else [detected(ctx)]
    db = ctx.db()
    for name in candidates:
        memory = db.get(name, slug) or (db.get(name, label) if label != slug else None)
        if memory is not None:
            return memory
    raise not_found(ctx, label, slug, candidates)


def not_found(ctx: Context, label: str, slug: str, searched: list[str]) -> NotFound:
    from ..support.textsafe import shell_word

    db = ctx.db()
    elsewhere = [s for s in db.stores_with_slug(slug) if s not in searched]
    message = f"no memory labelled {label!r} in {' or '.join(searched)}"
    suggestions: list[str] = []
    if elsewhere:
        where = elsewhere[0]
        also = f" (and {len(elsewhere) - 1} more)" if len(elsewhere) > 1 else ""
        message += (f"; {where}{also} has one: add --store {shell_word(where)}"
                    + (" (global is shared by every repository)" if where == GLOBAL else ""))
    else:
        from ..support.suggest import close, did_you_mean

        suggestions = close(label, db.labels(searched))
        message += did_you_mean(suggestions)
    return NotFound(message, label=label, stores=searched, elsewhere=elsewhere, suggestions=suggestions)


__all__ = ["GLOBAL", "branch_choice", "detected", "existing", "lookup", "search_scope", "target"]
