"""`thatch anchor | unanchor`: tie a memory to the code it describes, take
the code as it is now (--refresh), or untie it (operations in ops/anchors.py)."""

from __future__ import annotations

from typing import Annotated, Optional

from ..ops.context import Context
from .declare import BRIEF, Argument, Json, Label, Option, Store, command
from .output import Output

_ANCHORS = "anchors (path, start, end, commit, blob, fingerprint, anchored_at, drift)"


@command("anchor", examples=[
    'thatch anchor "parse_config ignores unknown keys" src/config.py:40-75',
    'thatch anchor "Release process" RELEASING.md scripts/release.sh',
    'thatch anchor --refresh "parse_config ignores unknown keys"   # accept the code as it is now',
], json=f"memory ({BRIEF}), status (anchored or refreshed), changed, {_ANCHORS}")
def anchor(
    ctx: Context, out: Output, *,
    label: Label,
    files: Annotated[Optional[list[str]], Argument(metavar="PATH[:START-END]...", show_default=False,
                                                   help="Files (in a git checkout), each optionally with a line"
                                                        " range.")] = None,
    refresh: Annotated[bool, Option("--refresh", help="Take the memory's anchors afresh from the code as it is now"
                                                      " (following moved lines and renamed files).")] = False,
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Anchor a memory to the code it describes: a file, or lines of one.

    Each anchor records the path from the repository's top level, the line range, the commit HEAD is at and the file's content, so recall, show, hygiene and an agent's context can say when that code has changed, moved or gone. Anchoring the same path and range again takes it afresh. A file outside any git checkout cannot be anchored (exit 2)."""
    from ..ops.anchors import anchor as add
    from ..ops.anchors import refresh as renew
    from ..support.errors import InvalidInput

    if refresh and files:
        raise InvalidInput("--refresh takes the anchors the memory has; give no files with it")
    change = renew(ctx, label, store) if refresh else add(ctx, label, files or [], store)
    _said(out, change)


@command("unanchor", examples=[
    'thatch unanchor "parse_config ignores unknown keys"',
    'thatch unanchor "Release process" scripts/release.sh',
], json=f"memory ({BRIEF}), status (unanchored), changed, {_ANCHORS}")
def unanchor(
    ctx: Context, out: Output, *,
    label: Label,
    path: Annotated[Optional[str], Argument(metavar="PATH", show_default=False,
                                            help="Only the anchors on this file (default: all).")] = None,
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Remove a memory's anchors (all, or those on one file); the memory stays."""
    from ..ops.anchors import unanchor as remove

    _said(out, remove(ctx, label, path, store))


def _said(out: Output, change) -> None:
    if out.json_mode:
        out.json(change.to_json())
        return
    from ..support.textsafe import visible

    m = change.memory
    rows = change.anchored.rows.get(m.key, [])
    count = f"{change.changed} anchor{'' if change.changed == 1 else 's'}"
    out.line(f"{change.verb.capitalize()} {visible(m.label, keep='')!r} in {m.store} ({count};"
             f" {len(rows)} in all)")
    drifts = change.anchored.drifts.get(m.key, [])
    for i, (path, start, end, commit, *_rest) in enumerate(rows):
        where = visible(path, keep="") + (f":{start}-{end}" if start is not None else "")
        state = f"  {drifts[i].state}" if i < len(drifts) else ""
        out.line(f"  {where}" + (f" @{commit[:7]}" if commit else "") + state)
