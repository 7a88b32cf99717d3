"""Anchors: tying a memory to the code it describes, and telling whether
that code has drifted since (`remember --file`, `thatch anchor`, `thatch
unanchor`, `anchor --refresh`, `recall --file`, and the drift marks of show,
recall, hygiene, the reminder, the nudge and the MCP tools).

An anchor is the file's path relative to its repository's top level, an
optional line range, the commit HEAD was at, the file's blob id and the
hashes of the anchored lines (storage/anchors.py). Drift is checked against
the working tree of the repository around the current directory
(location/drift.py), so the same anchors hold in every worktree and clone.
"""

from __future__ import annotations

import os

from ..support.errors import InvalidInput, NotFound

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: show and recall import this
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..location.drift import Drift, Worktree
    from ..memory.records import Memory
    from .context import Context

MAX_ANCHORS = 50  # per memory: an anchor is a pointer, not a copy of the tree


class Spec:
    """A file (and optional line range) as the user named it: PATH[:START-END]."""

    __slots__ = ("text", "path", "start", "end")

    def __init__(self, text: str, path: str, start: int | None, end: int | None) -> None:
        self.text, self.path, self.start, self.end = text, path, start, end


def parse(text: str) -> Spec:
    """PATH, PATH:LINE or PATH:START-END (lines counted from 1)."""
    if not text or "\0" in text:
        raise InvalidInput("give a file: PATH or PATH:START-END")
    path, colon, lines = text.rpartition(":")
    if colon and lines and all(part.isdigit() and part.isascii() for part in lines.split("-", 1)):
        first, _, last = lines.partition("-")
        start, end = int(first), int(last or first)
        if start < 1 or end < start:
            raise InvalidInput(f"{text!r}: a line range is START-END, counted from 1, START no greater than END")
        return Spec(text, path, start, end)
    return Spec(text, text, None, None)


def capture(ctx: Context, spec: Spec) -> tuple:
    """The anchor row (storage/anchors.py) for `spec` as the file is now:
    InvalidInput when it is not a file inside a git checkout, or the range
    runs past its end."""
    from ..location import drift, gitfs
    from ..support.textsafe import visible

    shown = visible(repr(spec.path), keep="")
    full = os.path.realpath(os.path.join(ctx.cwd_text, os.path.expanduser(spec.path)))
    if not os.path.isfile(full):
        raise InvalidInput(f"{shown} is not a file (nothing anchored)")
    loc = gitfs.locate(os.path.dirname(full))
    top = os.path.realpath(loc.worktree_text) if loc is not None and loc.worktree_text else None
    if top is None or os.path.commonpath([top, full]) != top or os.sep + ".git" + os.sep in full[len(top):] + os.sep:
        raise InvalidInput(f"{shown} is outside any git checkout: only files in a repository can be anchored"
                           " (nothing saved)")
    with open(full, "rb") as f:
        data = f.read()
    rel = os.path.relpath(full, top).replace(os.sep, "/")
    hashes = drift.line_hashes(data)
    if spec.start is not None:
        if hashes is None:
            raise InvalidInput(f"{shown} is binary or too large to anchor by lines; anchor the whole file")
        if spec.end is not None and spec.end > len(hashes):
            raise InvalidInput(f"{shown} has {len(hashes)} lines; the range {spec.start}-{spec.end} runs past its end")
        hashes = hashes[spec.start - 1:spec.end]
    commit = drift.head_commit(loc.git_text, loc.common_text) if loc is not None else None
    print_ = drift.fingerprint(hashes) if hashes is not None and spec.start is not None else None
    return (rel, spec.start, spec.end, commit, drift.blob_id(data), print_,
            "".join(hashes) if hashes is not None else None, ctx.now())


def capture_all(ctx: Context, files: Sequence[str]) -> list[tuple]:
    """Every file's anchor row, all checked before anything is written."""
    if len(files) > MAX_ANCHORS:
        raise InvalidInput(f"at most {MAX_ANCHORS} anchors per memory")
    return [capture(ctx, parse(text)) for text in files]


def row_json(row: Sequence, drifted: Drift | None = None, checked: bool = False) -> dict:
    """One anchor's JSON shape (`drift` null when it was not checked)."""
    path, start, end, commit, blob, print_, _hashes, at = row
    return {"path": path, "start": start, "end": end, "commit": commit, "blob": blob, "fingerprint": print_,
            "anchored_at": at, "drift": drifted.to_json() if drifted is not None else None}


def worktree(ctx: Context) -> Worktree | None:
    """The checkout around the current directory, where drift is checked."""
    from ..location.drift import Worktree

    loc = ctx.place().repo
    if loc is None or loc.worktree_text is None:
        return None
    return Worktree(os.path.realpath(loc.worktree_text), loc.git_text, loc.common_text)


class Anchored:
    """The anchors of some memories and, where a checkout is at hand, what
    became of each: `rows` and `drifts` by memory key, in the same order."""

    __slots__ = ("rows", "drifts")

    def __init__(self, rows: dict[tuple[str, str], list[tuple]], drifts: dict[tuple[str, str], list[Drift]]) -> None:
        self.rows, self.drifts = rows, drifts

    def json(self, key: tuple[str, str]) -> list[dict]:
        drifts = self.drifts.get(key)
        return [row_json(row, drifts[i] if drifts else None) for i, row in enumerate(self.rows.get(key, []))]

    def doubts(self, key: tuple[str, str]) -> list[str]:
        """One line per anchor whose code changed or is gone."""
        return [d.summary() for d in self.drifts.get(key, []) if d.doubtful]

    def notes(self, key: tuple[str, str]) -> list[str]:
        """One line per anchor that drifted at all (moved too)."""
        return [d.summary() for d in self.drifts.get(key, []) if d.state != "unchanged"]


def of(ctx: Context, keys: Iterable[tuple[str, str]], *, check: bool = True) -> Anchored:
    """The anchors of `keys`, checked for drift (`check`) when inside a checkout."""
    from ..storage import anchors

    rows = anchors.of_memories(ctx.db(), keys)
    return Anchored(rows, _drifts(ctx, rows) if check and rows else {})


def _drifts(ctx: Context, rows: dict[tuple[str, str], list[tuple]]) -> dict[tuple[str, str], list[Drift]]:
    from ..location.drift import check

    tree = worktree(ctx)
    if tree is None:
        return {}
    return {key: [check(tree, row) for row in found] for key, found in rows.items()}


def memory_json(ctx: Context, memory: Memory, anchored: Anchored | None = None) -> dict:
    """`Memory.public()` plus its anchors (each with its drift)."""
    anchored = anchored if anchored is not None else of(ctx, [memory.key])
    return {**memory.public(), "anchors": anchored.json(memory.key)}


def save(ctx: Context, memory: Memory, rows: Sequence[tuple], *, keep_others: bool) -> None:
    from ..storage import anchors

    anchors.replace(ctx.db(), memory.store, memory.slug, rows, keep_others=keep_others)


class AnchorChange:
    """`thatch anchor | unanchor` outcome: the memory, its anchors now, and how many changed."""

    __slots__ = ("memory", "anchored", "changed", "verb")

    def __init__(self, verb: str, memory: Memory, anchored: Anchored, changed: int) -> None:
        self.verb, self.memory, self.anchored, self.changed = verb, memory, anchored, changed

    def to_json(self) -> dict:
        return {"memory": self.memory.brief(), "status": self.verb, "changed": self.changed,
                "anchors": self.anchored.json(self.memory.key)}


def anchor(ctx: Context, label: str, files: Sequence[str], store: str | None = None) -> AnchorChange:
    """Add anchors to a memory of --store or the detected store (an anchor
    of the same path and range is taken afresh)."""
    from .scope import lookup

    if not files:
        raise InvalidInput("give at least one file: PATH or PATH:START-END")
    memory = lookup(ctx, label, store, fallback=False)
    rows = capture_all(ctx, files)
    save(ctx, memory, rows, keep_others=True)
    return AnchorChange("anchored", memory, of(ctx, [memory.key]), len(rows))


def refresh(ctx: Context, label: str, store: str | None = None) -> AnchorChange:
    """Accept the code as it is now as the anchors of a memory: each anchor
    follows its code (a moved range or renamed file) and is taken afresh
    there. An anchor whose code is gone is left, for `unanchor`."""
    from ..support.textsafe import visible
    from .scope import lookup

    memory = lookup(ctx, label, store, fallback=False)
    tree = worktree(ctx)
    if tree is None:
        raise InvalidInput("refreshing anchors needs the repository's checkout: run it inside the repository")
    current = of(ctx, [memory.key])
    found = current.rows.get(memory.key, [])
    if not found:
        raise NotFound(f"{visible(memory.label, keep='')!r} has no anchors to refresh", store=memory.store,
                       slug=memory.slug)
    rows, kept, changed = [], [], 0
    for row, drifted in zip(found, current.drifts.get(memory.key, [])):
        if drifted.state == "gone" or drifted.state == "unchanged":
            kept.append(row)
            continue
        start, end = (drifted.start, drifted.end) if row[1] is not None else (None, None)
        spec = Spec(drifted.path, os.path.join(tree.top, drifted.path), start, end)
        rows.append(capture(ctx, spec))
        changed += 1
    save(ctx, memory, kept + rows, keep_others=False)
    return AnchorChange("refreshed", memory, of(ctx, [memory.key]), changed)


def unanchor(ctx: Context, label: str, path: str | None = None, store: str | None = None) -> AnchorChange:
    """Remove a memory's anchors, or those on `path` (as stored, or as a
    file path from here)."""
    from ..storage import anchors
    from .scope import lookup

    memory = lookup(ctx, label, store, fallback=False)
    stored = path
    if path is not None:
        stored = relative(ctx, path) or path.replace(os.sep, "/")
    removed = anchors.remove(ctx.db(), memory.store, memory.slug, stored)
    return AnchorChange("unanchored", memory, of(ctx, [memory.key]), removed)


def relative(ctx: Context, path: str) -> str | None:
    """`path` (from the current directory) relative to its checkout's top
    level, '/'-separated, a directory ending in '/'; None outside a checkout."""
    tree = worktree(ctx)
    if tree is None:
        return None
    full = os.path.realpath(os.path.join(ctx.cwd_text, os.path.expanduser(path)))
    if os.path.commonpath([tree.top, full]) != tree.top:
        return None
    rel = os.path.relpath(full, tree.top).replace(os.sep, "/")
    if rel == ".":
        return ""
    return rel + "/" if os.path.isdir(full) else rel


def anchored_to(ctx: Context, stores: Sequence[str], paths: Sequence[str]) -> list[tuple[str, str]]:
    """Keys of the live memories of `stores` anchored to any of `paths`
    (files or directories, from the current directory), in store and label order."""
    from ..location.drift import check
    from ..storage import anchors

    wanted: list[str] = []
    for path in paths:
        rel = relative(ctx, path)
        if rel is None:
            from ..support.textsafe import visible

            raise InvalidInput(f"{visible(repr(path), keep='')} is outside this repository's checkout")
        wanted.append(rel)
    tree = worktree(ctx)

    def named(where: str) -> bool:
        return any(where == rel or (not rel or rel.endswith("/")) and where.startswith(rel) for rel in wanted)

    keys: dict[tuple[str, str], None] = {}
    for key, rows in anchors.in_stores(ctx.db(), stores).items():
        for row in rows:
            if named(row[0]):
                keys[key] = None
            elif tree is not None and not os.path.exists(os.path.join(tree.top, row[0])):
                # Its file was renamed: the anchor is on the file under its new name.
                drifted = check(tree, row)
                if drifted.state != "gone" and named(drifted.path):
                    keys[key] = None
    return list(keys)


MAX_ABOUT_FILES = 5  # memories brought up at one prompt for the files an agent opened


def about_files(ctx: Context, paths: Sequence[str]) -> list[tuple[Memory, list[str], list[str]]]:
    """The live memories of the detected store and global anchored to
    `paths` (those inside this checkout; others are skipped): each with
    where it is anchored and a line per anchor whose code changed or is gone."""
    from ..location.scope import default_scope

    inside = [path for path in paths if relative(ctx, path) is not None]
    if not inside:
        return []
    keys = anchored_to(ctx, default_scope(ctx.place()), inside)[:MAX_ABOUT_FILES]
    found = ctx.db().get_many(keys)
    anchored = of(ctx, keys)
    return [(found[key], [a["path"] + (f":{a['start']}-{a['end']}" if a["start"] else "")
                          for a in anchored.json(key)], anchored.doubts(key)) for key in keys if key in found]
