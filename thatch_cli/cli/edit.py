"""`thatch edit | rename`: change one memory in place (ops/memories.py).
Both act on the detected store, or the one named, never on another unasked."""

from __future__ import annotations

from typing import Annotated

from ..ops.context import Context
from .declare import FULL, Argument, Json, Label, Store, StoreArg, command
from .output import Output


@command("edit", examples=[
    'thatch edit "Release process"',
    'EDITOR="code --wait" thatch edit release-process',
], json=f"status (updated or unchanged), memory ({FULL}), old_label, old_slug, notices")
def edit(ctx: Context, out: Output, *, label: Label, store_arg: StoreArg = None, store: Store = None,
         as_json: Json = False) -> None:
    """Edit a memory in $VISUAL or $EDITOR, then save it in place.

    The file opens with the label as its first heading and the content below. Change either; a changed heading renames the memory. Branch, confidence, archived state and recall counts stay; dedup verdicts on it are cleared, as with remember --overwrite. Saving it unchanged changes nothing; an empty file, or an editor that fails, saves nothing. If the save fails, your text is kept in a file the error names."""
    from ..ops.memories import edit as save_edit
    from ..ops.scope import lookup
    from .editor import edited

    memory = lookup(ctx, label, store, fallback=False)
    with edited(ctx, memory.content.rstrip("\n") + "\n", memory.slug) as text:
        outcome = save_edit(ctx, memory, text)
    if out.json_mode:
        out.json(outcome.to_json())
        return
    m = outcome.memory
    if outcome.status == "unchanged":
        out.line(f"No changes; {m.label!r} in {m.store} left as it was")
        return
    if outcome.notice:
        out.notice(outcome.notice)
    renamed = f" (was {outcome.old_label!r})" if outcome.old_label != m.label else ""
    out.line(f"Updated {m.label!r} in {m.store}{renamed}")


@command("rename", examples=[
    'thatch rename "Release process" "Releasing a version"',
    'thatch rename old-label "New label" --store acme/widget',
], json=f"status (renamed), memory ({FULL}), old_label, old_slug, notices")
def rename(
    ctx: Context, out: Output, *,
    old: Annotated[str, Argument(metavar="OLD", complete="labels", help="Label (or slug) of the memory.")],
    new: Annotated[str, Argument(metavar="NEW", help="Its new label.")],
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Give a memory a new label; its slug and dedup verdicts follow.

    Everything else stays (content, branch, confidence, archived state, recall counts). Refused (exit 4) when another memory of the store already has that label."""
    from ..ops.memories import rename as relabel

    outcome = relabel(ctx, old, new, store)
    if out.json_mode:
        out.json(outcome.to_json())
        return
    if outcome.notice:
        out.notice(outcome.notice)
    m = outcome.memory
    out.line(f"Renamed {outcome.old_label!r} to {m.label!r} in {m.store}")
