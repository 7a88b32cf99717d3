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

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
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


class GitLocation:
    """Where a repository's control files are. Kept as text, with Path views
    built on first use: `thatch list` in a repository locates it on every
    run, and pathlib costs a light command ~6 ms to import. Not a dataclass
    (dataclasses pulls in inspect) nor a NamedTuple (typing)."""

    __slots__ = ("git_text", "common_text", "worktree_text")

    def __init__(self, git_dir: str | os.PathLike, common_dir: str | os.PathLike,
                 worktree: str | os.PathLike | None) -> None:
        self.git_text = os.fspath(git_dir)  # per-worktree control dir (holds HEAD, index)
        self.common_text = os.fspath(common_dir)  # shared control dir (holds config, refs, objects)
        # checkout top level; None for a bare repository
        self.worktree_text = os.fspath(worktree) if worktree is not None else None

    @property
    def git_dir(self) -> Path:
        return _path(self.git_text)

    @property
    def common_dir(self) -> Path:
        return _path(self.common_text)

    @property
    def worktree(self) -> Path | None:
        return _path(self.worktree_text) if self.worktree_text is not None else None

    def _key(self) -> tuple:
        return (self.git_text, self.common_text, self.worktree_text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GitLocation) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"GitLocation(git_dir={self.git_text!r}, common_dir={self.common_text!r}, worktree={self.worktree_text!r})"


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except (OSError, ValueError):
        return None


def _common_dir_of(git_dir: str) -> str:
    text = _read_text(os.path.join(git_dir, "commondir"))
    if text is None or not text.strip():
        return git_dir
    # commondir is usually "../.." relative to .git/worktrees/<name>; resolve
    # it so every worktree of a repository yields the same cache key.
    return os.path.realpath(os.path.join(git_dir, text.strip()))


def _is_git_dir(path: str) -> bool:
    # Same test git uses (HEAD plus an object store or a commondir pointer);
    # a stray empty ".git" directory must not capture the walk.
    if not os.path.isfile(os.path.join(path, "HEAD")):
        return False
    if os.path.isfile(os.path.join(path, "commondir")):
        return True
    return os.path.isdir(os.path.join(path, "objects")) and os.path.isdir(os.path.join(path, "refs"))


def _from_gitfile(dot_git: str) -> str | None:
    text = _read_text(dot_git)
    if text is None:
        return None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    target = first[len("gitdir:"):].strip()
    if not target:
        return None
    # A join keeps an absolute target as-is and anchors a relative one at
    # the directory holding the .git file, as git does.
    return os.path.realpath(os.path.join(os.path.dirname(dot_git), target))


def locate(cwd: str | os.PathLike) -> GitLocation | None:
    """Find the repository containing ``cwd`` by walking up to the root."""
    try:
        here = os.path.realpath(cwd)
    except (OSError, ValueError):
        return None
    d = here
    while True:
        dot_git = os.path.join(d, ".git")
        git_dir: str | None = None
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
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _head(loc: GitLocation) -> str | None:
    return _read_text(os.path.join(loc.git_text, "HEAD"))


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
    return f"{loc.git_text}\0{_head(loc) or ''}"


def _valid_branch_name(name: str) -> bool:
    # Not git's full check-ref-format: just enough that a name can never
    # escape refs/heads/ or hit a lock file when joined onto a path.
    if not name or name.startswith("/") or name.endswith("/"):
        return False
    parts = name.split("/")
    return all(p and p not in (".", "..") and not p.endswith(".lock") for p in parts)


def _packed_heads(loc: GitLocation) -> list[str]:
    text = _read_text(os.path.join(loc.common_text, "packed-refs"))
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
    return os.path.isdir(os.path.join(loc.common_text, "reftable"))


def branch_exists(loc: GitLocation, name: str) -> bool:
    """Whether local branch ``name`` exists (loose or packed).

    Callers use a False answer to act on a deletion, so when the refs cannot
    be read (reftable backend) this errs on the side of True.
    """
    if not _valid_branch_name(name):
        return False
    if _uses_reftable(loc):
        return True
    if os.path.isfile(os.path.join(loc.common_text, _HEADS, name)):
        return True
    return name in _packed_heads(loc)


def local_branches(loc: GitLocation) -> set[str]:
    """All local branch names, loose and packed.

    Empty for a reftable repository, whose refs we cannot read without
    parsing the format; confirm with branch_exists before treating a branch
    missing from this set as deleted.
    """
    names = set(_packed_heads(loc))
    root = os.path.join(loc.common_text, _HEADS)
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
        st = os.stat(os.path.join(loc.common_text, "config"))
    except OSError:
        return (0, -1, 0)
    return (st.st_mtime_ns, st.st_size, st.st_ino)
