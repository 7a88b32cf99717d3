"""Writing a memory in the user's editor, as `git commit` does: $VISUAL,
else $EDITOR, else vi (on a terminal only), run through `sh -c` so an
editor with arguments ("code --wait") works.

The text goes into a private temporary file (mkstemp: O_EXCL, mode 0600,
unpredictable name) ending in .md for the editor's highlighting. When the
save that follows fails, the file is kept and the error names it: what the
user typed is never lost."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from typing import Iterator

from ..ops.context import Context
from ..support.errors import InvalidInput, ThatchError


def _tty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def on_terminal(ctx: Context) -> bool:
    """Whether a person is at a terminal: standard input and output both are one."""
    return _tty(ctx.stdin or sys.stdin) and _tty(ctx.stdout or sys.stdout)


def editor_command(ctx: Context) -> str:
    for name in ("VISUAL", "EDITOR"):
        value = (ctx.env.get(name) or "").strip()
        if value:
            return value
    if on_terminal(ctx):
        return "vi"
    raise InvalidInput("no editor to open: set VISUAL or EDITOR (or give the content as an argument)")


# What a bare `thatch remember` opens: a new file says nothing of how it is read.
# An HTML comment, because Markdown's `#` is the heading the label comes from.
NEW_MEMORY_HINT = (
    "<!-- thatch: the first heading becomes the label, the rest the content, e.g.\n"
    "# Release process\n"
    "Tag the commit, build the wheel, upload it.\n"
    "Save and close to remember it; save it empty to cancel. This comment is removed. -->\n"
)


@contextmanager
def edited(ctx: Context, initial: str, name: str, hint: str = "") -> Iterator[str]:
    """Open the editor on `hint` then `initial` and give what was saved, the
    hint taken out wherever it still is. Raising inside the block keeps the
    file and names it in the error."""
    import re

    editor = editor_command(ctx)
    # Only letters, digits, - and _ in the file name: a label holds slashes, spaces, anything.
    safe = re.sub(r"[^\w-]+", "-", name, flags=re.ASCII)[:40]
    fd, path = tempfile.mkstemp(prefix=f"thatch-{safe}-", suffix=".md")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(hint + initial)
    keep = False
    try:
        if on_terminal(ctx):
            ctx.notice("waiting for your editor to close the file...")
        try:
            status = subprocess.call(["sh", "-c", f'{editor} "$@"', editor, path], cwd=ctx.cwd, env=dict(ctx.env))
        except OSError as exc:
            raise InvalidInput(f"cannot run the editor ({editor}): {exc.strerror or exc}") from None
        if status != 0:
            raise InvalidInput(f"the editor ({editor}) exited with status {status}; nothing saved")
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            text = fh.read()
        if hint:
            text = text.replace(hint, "", 1)
        if not text.strip():
            raise InvalidInput("the memory is empty; nothing saved")
        try:
            yield text
        except ThatchError as err:
            keep = True
            raise type(err)(f"{err.message}; your text is kept in {path}", **err.details, kept=path) from None
    finally:
        if not keep:
            os.unlink(path)
