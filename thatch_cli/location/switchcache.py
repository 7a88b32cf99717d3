"""The branch-switch cache: what post-checkout says for each branch, kept
in the git directory so the hook script can say it without starting Python.

File <git dir>/thatch-switch, written whole by `thatch _githook
post-checkout` when thatch's hook script runs it (THATCH_SWITCH_CACHE=1; a
temporary file renamed over it):

    thatch-switch v1
    <cwd>\t<THATCH_STORE>\t<THATCH_DB>\t<THATCH_DB_PATH>\t<XDG_CONFIG_HOME>\t<HOME>
    <database path>
    <branch>\t<line>        one per branch of the store that has memories
    .

The hook (templates/git/post-checkout) trusts it only when the second line
equals what its own environment gives (the store and the database follow
from those), the database, its -wal file (unless empty) and the
repository's config are all no newer than the cache file, and the last line
is there. Anything else
runs Python as before.

Its modification time is set to 2 s before the database was read, and it is
written only when none of those files changed in the 2 s before that: any
later write to them then has a strictly newer time, even on a file system
that keeps whole seconds or a coarse clock tick.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Mapping

FILE = "thatch-switch"
MAGIC = "thatch-switch v1"
END = "."
# Every variable the store or the database path is worked out from (beyond the
# repository's config, which the hook compares by time).
KEY_VARS = ("THATCH_STORE", "THATCH_DB", "THATCH_DB_PATH", "XDG_CONFIG_HOME", "HOME")
MARGIN_NS = 2_000_000_000


def _mtime_ns(path: str, empty_counts: bool = True) -> int:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return 0  # a file created later is newer than the cache
    return st.st_mtime_ns if st.st_size or empty_counts else 0




def stamp(db: str, common_dir: str) -> int | None:
    """The time to give a cache written from what is read next, or None when
    the files it depends on changed too recently to tell a later change apart."""
    at = time.time_ns() - MARGIN_NS
    # An empty -wal holds nothing the database file lacks: a reader (this
    # hook's own read, too) creates it empty when it is missing.
    newest = max(_mtime_ns(db), _mtime_ns(db + "-wal", empty_counts=False),
                 _mtime_ns(os.path.join(common_dir, "config")))
    return at if newest <= at else None


def _plain(text: str) -> bool:
    return "\n" not in text and "\t" not in text and "\r" not in text


def write(env: Mapping[str, str], cwd: str, git_dir: str, db: str, lines: Mapping[str, str], at: int) -> None:
    """Replace the cache with `lines` (branch -> what the hook says there)."""
    fields = [cwd, *(env.get(name, "") for name in KEY_VARS)]
    if not all(_plain(f) for f in (*fields, db)):
        return  # the hook compares lines: a field that spans two cannot be told apart
    rows = [MAGIC, "\t".join(fields), db]
    rows += [f"{branch}\t{line}" for branch, line in lines.items() if _plain(branch) and _plain(line)]
    rows.append(END)
    path = os.path.join(git_dir, FILE)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(os.fsencode("\n".join(rows) + "\n"))
        os.utime(tmp, ns=(at, at))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def remove_all(common_dir: str) -> None:
    """Delete the caches of the repository and of its linked worktrees (`thatch hooks uninstall`)."""
    dirs = [common_dir]
    try:
        dirs += [os.path.join(common_dir, "worktrees", name) for name in os.listdir(os.path.join(common_dir, "worktrees"))]
    except OSError:
        pass
    for d in dirs:
        try:
            os.unlink(os.path.join(d, FILE))
        except OSError:
            pass
