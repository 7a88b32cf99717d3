"""Read just enough of a git repository's on-disk layout for hot paths.

Prompt hooks, git hooks and shell completion share a ~50 ms budget, and
importing dulwich alone eats most of it, so this module is stdlib-only and
touches a handful of files. Anything that needs real git semantics (config
parsing, object access) belongs in ``thatch_cli.location.identity``.

Deliberately ignored: ``GIT_DIR``/``GIT_WORK_TREE`` and friends (the store
must follow the directory the user is in, not whatever a parent git process
exported into a hook's environment) and ``core.worktree``.
"""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

__all__ = [
    "GitLocation",
    "locate",
    "head_branch",
    "head_signature",
    "branch_exists",
    "local_branches",
    "config_stamp",
]

_HEADS = "refs/heads/"


# A named tuple, not a dataclass or typing.NamedTuple: dataclasses pulls in
# inspect (~5 ms) and typing ~2 ms, on paths that run at every prompt change.
class GitLocation(namedtuple("GitLocation", "git_dir common_dir worktree")):
    """Where a repository keeps its parts: git_dir, the per-worktree control
    dir (HEAD, index); common_dir, the shared one (config, refs, objects);
    worktree, the checkout's top level (None for a bare repository)."""

    __slots__ = ()


def _read_text(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except (OSError, ValueError):
        return None


def _common_dir_of(git_dir: Path) -> Path:
    text = _read_text(git_dir / "commondir")
    if text is None or not text.strip():
        return git_dir
    # commondir is usually "../.." relative to .git/worktrees/<name>; resolve
    # it so every worktree of a repository yields the same cache key.
    return Path(os.path.realpath(git_dir / text.strip()))


def _is_git_dir(path: Path) -> bool:
    # Same test git uses (HEAD plus an object store or a commondir pointer);
    # a stray empty ".git" directory must not capture the walk.
    if not os.path.isfile(path / "HEAD"):
        return False
    if os.path.isfile(path / "commondir"):
        return True
    return os.path.isdir(path / "objects") and os.path.isdir(path / "refs")


def _from_gitfile(dot_git: Path) -> Path | None:
    text = _read_text(dot_git)
    if text is None:
        return None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    target = first[len("gitdir:"):].strip()
    if not target:
        return None
    # Path join keeps an absolute target as-is and anchors a relative one at
    # the directory holding the .git file, as git does.
    return Path(os.path.realpath(dot_git.parent / target))


def locate(cwd: Path) -> GitLocation | None:
    """Find the repository containing ``cwd`` by walking up to the root."""
    try:
        here = Path(os.path.realpath(cwd))
    except (OSError, ValueError):
        return None
    for d in (here, *here.parents):
        dot_git = d / ".git"
        git_dir: Path | None = None
        if os.path.isdir(dot_git):
            if _is_git_dir(dot_git):
                git_dir = dot_git
        elif os.path.isfile(dot_git):
            git_dir = _from_gitfile(dot_git)
            if git_dir is not None and not _is_git_dir(git_dir):
                git_dir = None
        if git_dir is not None:
            return GitLocation(git_dir, _common_dir_of(git_dir), d)
        # A bare repository, or the inside of a .git directory: there is no
        # checkout to report.
        if _is_git_dir(d):
            return GitLocation(d, _common_dir_of(d), None)
    return None


def _head(loc: GitLocation) -> str | None:
    return _read_text(loc.git_dir / "HEAD")


def head_branch(loc: GitLocation) -> str | None:
    """Branch HEAD points at (``feat/x`` for ``refs/heads/feat/x``); None if
    detached, unreadable, or pointing outside refs/heads."""
    text = _head(loc)
    if text is None:
        return None
    text = text.strip()
    if not text.startswith("ref:"):
        return None  # detached: a raw object id
    ref = text[len("ref:"):].strip()
    if not ref.startswith(_HEADS):
        return None
    name = ref[len(_HEADS):]
    # reftable repositories park HEAD on this placeholder; the real target
    # lives in the reftable, which we cannot read here.
    if not name or name == ".invalid":
        return None
    return name


def head_signature(loc: GitLocation) -> str:
    """Cheap value that changes whenever HEAD does.

    The git dir is part of it so that moving between two repositories (or
    worktrees) that both sit on ``main`` still counts as a change.
    """
    return f"{loc.git_dir}\0{_head(loc) or ''}"


def _valid_branch_name(name: str) -> bool:
    # Not git's full check-ref-format: just enough that a name can never
    # escape refs/heads/ or hit a lock file when joined onto a path.
    if not name or name.startswith("/") or name.endswith("/"):
        return False
    parts = name.split("/")
    return all(p and p not in (".", "..") and not p.endswith(".lock") for p in parts)


def _packed_heads(loc: GitLocation) -> list[str]:
    text = _read_text(loc.common_dir / "packed-refs")
    if not text:
        return []
    out = []
    for line in text.splitlines():
        # "# pack-refs with: ..." header and "^<sha>" peeled-tag lines are
        # not refs.
        if not line or line[0] in "#^":
            continue
        _, _, ref = line.partition(" ")
        if ref.startswith(_HEADS) and len(ref) > len(_HEADS):
            out.append(ref[len(_HEADS):])
    return out


def _uses_reftable(loc: GitLocation) -> bool:
    return os.path.isdir(loc.common_dir / "reftable")


def branch_exists(loc: GitLocation, name: str) -> bool:
    """Whether local branch ``name`` exists (loose or packed).

    Callers use a False answer to act on a deletion, so when the refs cannot
    be read (reftable backend) this errs on the side of True.
    """
    if not _valid_branch_name(name):
        return False
    if _uses_reftable(loc):
        return True
    if os.path.isfile(loc.common_dir / _HEADS / name):
        return True
    return name in _packed_heads(loc)


def local_branches(loc: GitLocation) -> set[str]:
    """All local branch names, loose and packed.

    Empty for a reftable repository, whose refs we cannot read without
    parsing the format; confirm with branch_exists before treating a branch
    missing from this set as deleted.
    """
    names = set(_packed_heads(loc))
    root = loc.common_dir / _HEADS
    for dirpath, _dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for f in files:
            if f.endswith(".lock"):
                continue  # a ref mid-update, not a branch
            names.add(f if rel == "." else f"{rel}/{f}".replace(os.sep, "/"))
    return names


def config_stamp(loc: GitLocation) -> tuple[int, int, int]:
    """Cache key for ``<common_dir>/config``: (mtime_ns, size, inode).

    The inode is included because git rewrites config through a lock file
    and rename, so every write gets a new inode even when a same-length edit
    lands within the filesystem's timestamp granularity.
    """
    try:
        st = os.stat(loc.common_dir / "config")
    except OSError:
        return (0, -1, 0)
    return (st.st_mtime_ns, st.st_size, st.st_ino)
