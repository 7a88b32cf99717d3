"""Store identity (``owner/repo``) for the repository around a directory.

dulwich is imported inside functions only: ``resolve_store`` is called from
hot paths and light commands (`thatch list` in a repository), and must stay
dulwich-free when its cache answers; it also stays free of pathlib, json
and re then (a few milliseconds each).
"""

from __future__ import annotations

import os

from . import gitfs

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    import re  # compiled on a cache miss only

__all__ = [
    "parse_remote_url",
    "detect_store",
    "IdentityCache",
    "resolve_store",
]

UNKNOWN = "unknown"

def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(scp-like, scheme, remote helper) patterns, compiled on a cache miss only."""
    import re

    # git's own rule for "is this scp-like": a colon before any slash. The host
    # may be a bracketed IPv6 literal.
    scp = re.compile(r"^(?:[^@/]+@)?(\[[^\]/]+\]|[^/:\[\]]+):(.*)$")
    scheme = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")
    # "<helper>::<address>" selects a git remote helper; the address follows.
    helper = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::(?!/)")
    return scp, scheme, helper


def _owner_repo(path: str) -> str | None:
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")].rstrip("/")
    parts = [p for p in path.split("/") if p]
    # One segment carries no owner; let the caller fall back to a dir name.
    if len(parts) < 2 or any(p in (".", "..") for p in parts):
        return None
    # Keep every segment: GitLab-style nested groups are part of the identity.
    return "/".join(parts)


def parse_remote_url(url: str) -> str | None:
    """``owner/repo`` (or ``group/sub/repo``) from a git remote URL.

    Local paths and ``file://`` URLs return None on purpose: their path says
    where a clone happens to live on this machine, not which project it is,
    so the caller's directory-name fallback is the better identity.
    """
    if not isinstance(url, str):
        return None
    scp, scheme, helper = _patterns()
    url = helper.sub("", url.strip(), count=1)
    if not url:
        return None
    if "://" in url:
        from urllib.parse import unquote, urlsplit  # cache misses only

        try:
            parts = urlsplit(url)
        except ValueError:  # e.g. an unbalanced IPv6 bracket
            return None
        if not scheme.match(parts.scheme) or parts.scheme.lower() == "file":
            return None
        if not parts.netloc:
            return None
        return _owner_repo(unquote(parts.path))
    if url.startswith(("/", "./", "../", "~", "\\")):
        return None
    m = scp.match(url)
    if m is None:
        return None  # a relative local path, or garbage
    host, path = m.groups()
    if len(host) == 1 and path[:1] in ("/", "\\"):
        return None  # a Windows drive letter, "C:/src/repo"
    return _owner_repo(path)


def _repo_name(common_dir: str | os.PathLike) -> str | None:
    # "<main>/.git" names the main checkout, so every linked worktree maps to
    # the main repository's name; a bare "foo.git" names itself.
    common = os.fspath(common_dir).rstrip(os.sep) or os.sep
    name = os.path.basename(common)
    if name == ".git":
        name = os.path.basename(os.path.dirname(common))
    elif name.endswith(".git"):
        name = name[: -len(".git")]
    return name or None


def _dir_name(cwd: str | os.PathLike) -> str:
    try:
        return os.path.basename(os.path.realpath(cwd)) or UNKNOWN
    except (OSError, ValueError):
        return UNKNOWN


def detect_store(cwd: str | os.PathLike) -> str:
    """origin's ``owner/repo``, else the main checkout's name, else the
    directory's name, else ``"unknown"``. Never raises."""
    common: str | None = None
    try:
        from dulwich.repo import Repo

        repo = Repo.discover(os.fspath(cwd))
        try:
            # For a linked worktree dulwich reports e.g.
            # "<main>/.git/worktrees/wt/../.."; normalise before naming.
            common = os.path.realpath(repo.commondir())
            # get_config() reads <commondir>/config, where remotes live, and
            # only that file: url.insteadOf in global config is not applied.
            url = repo.get_config().get((b"remote", b"origin"), b"url")
        finally:
            repo.close()
        store = parse_remote_url(os.fsdecode(url))
        if store:
            return store
    except Exception:
        # Not a repository, a corrupt one, no origin, or config dulwich can't
        # parse: every one of these just means "try the next fallback".
        pass
    if common is None:
        loc = gitfs.locate(cwd)
        common = loc.common_text if loc else None
    if common is not None:
        name = _repo_name(common)
        if name:
            return name
    return _dir_name(cwd)


class IdentityCache:
    """``common_dir -> store`` map in a small text file, keyed on the
    repository config's stamp so a remote change invalidates its entry: a
    header line, then one entry per line, `key TAB mtime_ns TAB size TAB
    inode TAB store`, oldest first. Text rather than JSON: reading it is the
    whole cost of knowing the store in a repository, and `json` would import
    `re`. A key or store holding a tab or a line break is never cached.

    Every failure degrades to a miss (read) or a no-op (write): the cache is
    an optimisation and must never break the command using it.
    """

    HEADER = "thatch repository identities 2"
    MAX_ENTRIES = 256  # bounds the file; oldest-written entries go first

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)

    def _load(self) -> dict[str, tuple[tuple[int, ...], str]]:
        try:
            with open(self.path, encoding="utf-8", errors="surrogateescape") as fh:
                lines = fh.read().split("\n")
        except (OSError, ValueError):
            return {}
        if not lines or lines[0] != self.HEADER:
            return {}
        entries: dict[str, tuple[tuple[int, ...], str]] = {}
        for line in lines[1:]:
            fields = line.split("\t")
            if len(fields) != 5 or not fields[4]:
                continue
            try:
                stamp = (int(fields[1]), int(fields[2]), int(fields[3]))
            except ValueError:
                continue
            entries[fields[0]] = (stamp, fields[4])
        return entries

    def get(self, key: str, stamp: tuple) -> str | None:
        entry = self._load().get(key)
        if entry is None or entry[0] != tuple(stamp):
            return None
        return entry[1]

    def put(self, key: str, stamp: tuple, store: str) -> None:
        if any(ch in text for text in (key, store) for ch in "\t\n\r"):
            return
        entries = self._load()
        entries.pop(key, None)  # re-insert so it counts as newest
        entries[key] = (tuple(stamp), store)
        while len(entries) > self.MAX_ENTRIES:
            del entries[next(iter(entries))]
        lines = [self.HEADER] + [f"{k}\t{s[0]}\t{s[1]}\t{s[2]}\t{v}" for k, (s, v) in entries.items()]
        from ..support.files import write_cache  # a miss pays for the atomic write

        write_cache(self.path, "\n".join(lines) + "\n")


def resolve_store(cwd: str | os.PathLike, cache_path: str | os.PathLike | None) -> str:
    """Store for ``cwd``, answered from the cache at ``cache_path`` when the
    repository's config is unchanged (no dulwich import on that path)."""
    loc = gitfs.locate(cwd)
    if loc is None:
        return _dir_name(cwd)
    key = loc.common_text
    stamp = gitfs.config_stamp(loc)
    cache = IdentityCache(cache_path) if cache_path is not None else None
    if cache is not None:
        hit = cache.get(key, stamp)
        if hit is not None:
            return hit
    store = detect_store(cwd)
    if cache is not None:
        cache.put(key, stamp, store)
    return store
