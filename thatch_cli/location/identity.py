"""Store identity (``owner/repo``) for the repository around a directory.

dulwich is imported inside functions only: ``resolve_store`` is called from
hot paths and must stay dulwich-free when its cache answers.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..files import read_json_object, write_json_cache
from . import gitfs

__all__ = [
    "parse_remote_url",
    "detect_store",
    "IdentityCache",
    "resolve_store",
]

UNKNOWN = "unknown"

# git's own rule for "is this scp-like": a colon before any slash. The host
# may be a bracketed IPv6 literal.
_SCP = re.compile(r"^(?:[^@/]+@)?(\[[^\]/]+\]|[^/:\[\]]+):(.*)$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")
# "<helper>::<address>" selects a git remote helper; the address follows.
_HELPER = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::(?!/)")


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
    url = _HELPER.sub("", url.strip(), count=1)
    if not url:
        return None
    if "://" in url:
        from urllib.parse import unquote, urlsplit  # cache misses only

        try:
            parts = urlsplit(url)
        except ValueError:  # e.g. an unbalanced IPv6 bracket
            return None
        if not _SCHEME.match(parts.scheme) or parts.scheme.lower() == "file":
            return None
        if not parts.netloc:
            return None
        return _owner_repo(unquote(parts.path))
    if url.startswith(("/", "./", "../", "~", "\\")):
        return None
    m = _SCP.match(url)
    if m is None:
        return None  # a relative local path, or garbage
    host, path = m.groups()
    if len(host) == 1 and path[:1] in ("/", "\\"):
        return None  # a Windows drive letter, "C:/src/repo"
    return _owner_repo(path)


def _repo_name(common_dir: Path) -> str | None:
    # "<main>/.git" names the main checkout, so every linked worktree maps to
    # the main repository's name; a bare "foo.git" names itself.
    name = common_dir.name
    if name == ".git":
        name = common_dir.parent.name
    elif name.endswith(".git"):
        name = name[: -len(".git")]
    return name or None


def _dir_name(cwd: Path) -> str:
    try:
        return Path(os.path.realpath(cwd)).name or UNKNOWN
    except (OSError, ValueError):
        return UNKNOWN


def detect_store(cwd: Path) -> str:
    """origin's ``owner/repo``, else the main checkout's name, else the
    directory's name, else ``"unknown"``. Never raises."""
    common: Path | None = None
    try:
        from dulwich.repo import Repo

        repo = Repo.discover(os.fspath(cwd))
        try:
            # For a linked worktree dulwich reports e.g.
            # "<main>/.git/worktrees/wt/../.."; normalise before naming.
            common = Path(os.path.realpath(repo.commondir()))
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
        common = loc.common_dir if loc else None
    if common is not None:
        name = _repo_name(common)
        if name:
            return name
    return _dir_name(cwd)


class IdentityCache:
    """``common_dir -> store`` map in a small JSON file, keyed on the
    repository config's stamp so a remote change invalidates its entry.

    Every failure degrades to a miss (read) or a no-op (write): the cache is
    an optimisation and must never break the command using it.
    """

    VERSION = 1
    MAX_ENTRIES = 256  # bounds the file; oldest-written entries go first

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def _load(self) -> dict[str, dict]:
        data = read_json_object(self.path)
        if data.get("version") != self.VERSION:
            return {}
        entries = data.get("entries")
        return entries if isinstance(entries, dict) else {}

    def get(self, key: str, stamp: tuple) -> str | None:
        entry = self._load().get(key)
        if not isinstance(entry, dict) or entry.get("stamp") != list(stamp):
            return None
        store = entry.get("store")
        return store if isinstance(store, str) and store else None

    def put(self, key: str, stamp: tuple, store: str) -> None:
        entries = self._load()
        entries.pop(key, None)  # re-insert so it counts as newest
        entries[key] = {"stamp": list(stamp), "store": store}
        while len(entries) > self.MAX_ENTRIES:
            del entries[next(iter(entries))]
        write_json_cache(self.path, {"version": self.VERSION, "entries": entries})


def resolve_store(cwd: Path, cache_path: Path | None) -> str:
    """Store for ``cwd``, answered from the cache at ``cache_path`` when the
    repository's config is unchanged (no dulwich import on that path)."""
    loc = gitfs.locate(cwd)
    if loc is None:
        return _dir_name(cwd)
    key = str(loc.common_dir)
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
