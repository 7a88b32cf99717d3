"""`thatch tag | untag`: a memory's tags (memory/fields.py), added or taken
away one memory at a time; `remember --tag` sets them when saving, and
`list --tag` / `recall --tag` filter by them (both from the declaration).

Light commands: nothing here imports numpy, torch or sentence-transformers."""

from __future__ import annotations

from .declare import BRIEF, Argument, command

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from typing import Annotated

    from ..ops.context import Context
    from .declare import Json, Label, Store
    from .output import Output

NOTES = ("A tag is stored lower-case with its words joined by '-' (`Needs Review` is `needs-review`), at most 50"
         " characters, without ',' or invisible characters (exit 2 otherwise); a memory has at most 32.")


@command("tag", examples=['thatch tag "Release process" ci release', 'thatch list --tag ci'],
         json=f"memory ({BRIEF}), changed, notices", notes=NOTES)
def tag(
    ctx: Context, out: Output, *,
    label: Label,
    tags: Annotated[list[str], Argument(metavar="TAG...", complete="tags", help="The tags to add.")],
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Tag a memory (tagging it again with the same tag changes nothing)."""
    _tagged(ctx, out, label, tags, store, add=True)


@command("untag", examples=['thatch untag "Release process" ci'], json=f"memory ({BRIEF}), changed, notices")
def untag(
    ctx: Context, out: Output, *,
    label: Label,
    tags: Annotated[list[str], Argument(metavar="TAG...", complete="tags", help="The tags to take away.")],
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Take tags away from a memory (a tag it does not have changes nothing)."""
    _tagged(ctx, out, label, tags, store, add=False)


def _tagged(ctx: Context, out: Output, label: str, tags: list[str], store: str | None, *, add: bool) -> None:
    from ..ops.memories import set_items

    change = set_items(ctx, label, "tags", tags, add=add, store=store)
    if out.json_mode:
        out.json(change.to_json())
        return
    m = change.memory
    held = ", ".join(m.tags) or "no tags"
    out.line(f"{'Tagged' if add else 'Untagged'} {m.label!r} in {m.store} (now: {held})" if change.changed
             else f"Unchanged: {m.label!r} in {m.store} has {held}")
