"""Replacing small files safely."""

from __future__ import annotations

import os
from pathlib import Path


def replace_atomically(path: Path, text: str, mode: int) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over
    `path`: a reader (git running a hook, a shell loading completions, a
    concurrent thatch) sees the old file or the new one, never half of one.
    Raises OSError and leaves no temporary file behind."""
    import tempfile  # only writers pay for it; hot paths mostly read

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
