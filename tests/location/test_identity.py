"""Store identity: URL parsing, dulwich detection, and the identity cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from thatch_cli.location import identity as repo_mod
from thatch_cli.location.identity import (
    IdentityCache,
    detect_store,
    parse_remote_url,
    resolve_store,
)

from helpers import git

ROOT = Path(__file__).resolve().parents[2]


def make_repo(path: Path, origin: str | None = None) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "commit", "-q", "--allow-empty", "-m", "init")
    if origin is not None:
        git(path, "remote", "add", "origin", origin)
    return path.resolve()


# --- parse_remote_url -------------------------------------------------------

URLS = [
    # scp-like
    ("git@github.com:owner/repo.git", "owner/repo"),
    ("git@github.com:owner/repo", "owner/repo"),
    ("host:owner/repo", "owner/repo"),
    ("host:owner/repo.git/", "owner/repo"),
    ("git@gitlab.com:group/sub/repo.git", "group/sub/repo"),
    ("git@[::1]:owner/repo.git", "owner/repo"),
    # https / http
    ("https://github.com/owner/repo.git", "owner/repo"),
    ("https://github.com/owner/repo", "owner/repo"),
    ("https://github.com/owner/repo/", "owner/repo"),
    ("https://github.com/owner/repo.git/", "owner/repo"),
    ("http://host:8080/owner/repo.git", "owner/repo"),
    ("https://user@host/owner/repo.git", "owner/repo"),
    ("https://user:tok@host:8443/owner/repo/", "owner/repo"),
    ("https://gitlab.com/group/sub/repo.git", "group/sub/repo"),
    ("https://host/owner/my%20repo.git", "owner/my repo"),
    ("https://host/owner/repo.git?ref=x#frag", "owner/repo"),
    # ssh / git / helpers
    ("ssh://git@host:2222/owner/repo.git", "owner/repo"),
    ("ssh://host/owner/repo", "owner/repo"),
    ("git+ssh://git@host/owner/repo.git", "owner/repo"),
    ("git://host/owner/repo.git", "owner/repo"),
    ("persistent-https::https://host/owner/repo", "owner/repo"),
    # whitespace
    ("  git@github.com:owner/repo.git\n", "owner/repo"),
    ("\thttps://github.com/owner/repo\t", "owner/repo"),
    # local: deliberately None so the directory-name fallback applies
    ("file:///path/to/repo.git", None),
    ("file://localhost/srv/owner/repo.git", None),
    ("/path/to/repo.git", None),
    ("./rel/owner/repo", None),
    ("../owner/repo", None),
    ("owner/repo", None),
    ("~/src/repo.git", None),
    ("C:/src/owner/repo", None),
    ("C:\\src\\owner\\repo", None),
    # no owner, or garbage
    ("https://github.com/repo.git", None),
    ("git@github.com:repo.git", None),
    ("https://github.com/", None),
    ("https:///owner/repo", None),
    ("https://[::1/owner/repo", None),
    ("://", None),
    ("host:", None),
    ("host:owner/../repo", None),
    ("not a url", None),
    ("", None),
    ("   ", None),
]


@pytest.mark.parametrize(("url", "expected"), URLS)
def test_parse_remote_url(url: str, expected: str | None) -> None:
    assert parse_remote_url(url) == expected


# --- detect_store / current_branch -----------------------------------------


def test_detect_store_from_origin_in_subdir(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "checkout", "git@github.com:acme/widgets.git")
    sub = r / "src" / "pkg"
    sub.mkdir(parents=True)
    assert detect_store(r) == "acme/widgets"
    assert detect_store(sub) == "acme/widgets"


@pytest.mark.parametrize(("origin", "store"), [
    ("git@github.com:acme/widget.git", "acme/widget"),
    ("https://github.com/acme/widget", "acme/widget"),
    ("https://user:token@git.example.com:8443/acme/widget.git/", "acme/widget"),
    ("ssh://git@git.example.com:2222/acme/widget.git", "acme/widget"),
    ("git://git.example.com/acme/widget.git", "acme/widget"),
    ("https://gitlab.com/group/sub/widget.git", "group/sub/widget"),
    ("git@gitlab.com:group/sub/widget.git", "group/sub/widget"),
])
def test_every_url_form_in_a_real_repository(tmp_path: Path, origin: str, store: str) -> None:
    """Each remote form, as git itself records it, from a subdirectory and
    through the cached path the hooks use."""
    r = make_repo(tmp_path / "checkout", origin)
    sub = r / "deep" / "er"
    sub.mkdir(parents=True)
    assert detect_store(sub) == store
    cache = tmp_path / "cache.json"
    assert resolve_store(sub, cache) == store  # miss
    assert resolve_store(r, cache) == store  # hit


def test_detect_store_ignores_other_remotes(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "checkout")
    git(r, "remote", "add", "upstream", "git@github.com:up/stream.git")
    assert detect_store(r) == "checkout"


def test_detect_store_without_remote_uses_repo_name(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "myproj")
    sub = r / "deep" / "er"
    sub.mkdir(parents=True)
    assert detect_store(sub) == "myproj"


def test_detect_store_local_origin_falls_back(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "clone", "file:///srv/git/acme/widgets.git")
    assert detect_store(r) == "clone"


def test_detect_store_linked_worktree(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "main-checkout", "https://gitlab.com/g/sub/r.git")
    git(r, "worktree", "add", "-q", "../wt", "-b", "feat")
    assert detect_store(tmp_path / "wt") == "g/sub/r"


def test_detect_store_linked_worktree_without_remote(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "realname")
    git(r, "worktree", "add", "-q", "../wt-dir", "-b", "feat")
    (tmp_path / "wt-dir" / "sub").mkdir()
    assert detect_store(tmp_path / "wt-dir" / "sub") == "realname"


def test_detect_store_bare(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "-b", "main", "foo.git")
    assert detect_store(tmp_path / "foo.git") == "foo"
    git(tmp_path / "foo.git", "remote", "add", "origin", "git@h:o/foo.git")
    assert detect_store(tmp_path / "foo.git") == "o/foo"


def test_detect_store_not_a_repo(tmp_path: Path) -> None:
    d = tmp_path / "just-a-dir"
    d.mkdir()
    assert detect_store(d) == "just-a-dir"


def test_detect_store_unknown_at_root() -> None:
    # "/" has no basename; assumes the filesystem root isn't a repository.
    assert detect_store(Path("/")) == "unknown"


def test_detect_store_corrupt_config(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "broken", "git@h:o/r.git")
    (r / ".git" / "config").write_bytes(b"[remote \"origin\"\n\x00\xff garbage [[[")
    assert detect_store(r) == "broken"


def current_branch(path: Path) -> str | None:
    """The branch the one resolver (location/scope.py) reports for `path`."""
    from thatch_cli.location import scope

    return scope.here(os.environ, path).branch


def test_current_branch(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p")
    assert current_branch(r) == "main"
    git(r, "checkout", "-q", "-b", "feature/with/slashes")
    (r / "sub").mkdir()
    assert current_branch(r / "sub") == "feature/with/slashes"
    git(r, "checkout", "-q", "--detach")
    assert current_branch(r) is None


def test_current_branch_linked_worktree(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p")
    git(r, "worktree", "add", "-q", "../wt", "-b", "feat")
    assert current_branch(tmp_path / "wt") == "feat"
    assert current_branch(r) == "main"


def test_current_branch_not_a_repo(tmp_path: Path) -> None:
    assert current_branch(tmp_path) is None


# --- resolve_store / IdentityCache -----------------------------------------


def _entries(cache: Path) -> dict:
    return {key: {"stamp": list(stamp), "store": store}
            for key, (stamp, store) in IdentityCache(cache)._load().items()}


def test_resolve_store_miss_then_hit(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p", "git@github.com:acme/one.git")
    cache = tmp_path / "cache" / "sub" / "identity.json"
    assert resolve_store(r, cache) == "acme/one"
    assert cache.is_file()
    assert (cache.parent.stat().st_mode & 0o777) == 0o700
    entries = _entries(cache)
    assert list(entries) == [str(r / ".git")]

    # Prove a hit is served from the file: doctor the cached value.
    cache.write_text(cache.read_text().replace("\tacme/one\n", "\tfrom/cache\n"))
    assert resolve_store(r / ".", cache) == "from/cache"


def test_resolve_store_invalidated_by_set_url(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p", "git@github.com:acme/one.git")
    cache = tmp_path / "identity.json"
    assert resolve_store(r, cache) == "acme/one"
    git(r, "remote", "set-url", "origin", "git@github.com:acme/two.git")
    assert resolve_store(r, cache) == "acme/two"
    git(r, "remote", "remove", "origin")
    assert resolve_store(r, cache) == "p"


def test_resolve_store_worktrees_share_entry(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p", "git@h:acme/one.git")
    git(r, "worktree", "add", "-q", "../wt", "-b", "feat")
    cache = tmp_path / "identity.json"
    assert resolve_store(tmp_path / "wt", cache) == "acme/one"
    assert resolve_store(r, cache) == "acme/one"
    assert list(_entries(cache)) == [str(r / ".git")]


def test_resolve_store_without_cache(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p", "git@h:acme/one.git")
    assert resolve_store(r, None) == "acme/one"


def test_resolve_store_not_a_repo(tmp_path: Path) -> None:
    d = tmp_path / "plain"
    d.mkdir()
    cache = tmp_path / "identity.json"
    assert resolve_store(d, cache) == "plain"
    assert not cache.exists()


def test_resolve_store_corrupt_cache_is_a_miss(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p", "git@h:acme/one.git")
    cache = tmp_path / "identity.json"
    cache.write_text("thatch repository identities 2\nnot\tan\tentry\n{not json")
    assert resolve_store(r, cache) == "acme/one"
    assert _entries(cache)[str(r / ".git")]["store"] == "acme/one"


def test_resolve_store_cache_parent_is_a_file(tmp_path: Path) -> None:
    # Works as root too, unlike chmod: mkdir under a regular file must fail.
    r = make_repo(tmp_path / "p", "git@h:acme/one.git")
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    assert resolve_store(r, blocker / "identity.json") == "acme/one"
    assert blocker.is_file()


def test_resolve_store_cache_path_is_a_directory(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p", "git@h:acme/one.git")
    cache = tmp_path / "cachedir" / "identity.json"
    cache.mkdir(parents=True)
    assert resolve_store(r, cache) == "acme/one"
    assert resolve_store(r, cache) == "acme/one"
    assert os.listdir(cache.parent) == ["identity.json"]  # no temp files left


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory modes")
def test_resolve_store_cache_dir_read_only(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p", "git@h:acme/one.git")
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    try:
        assert resolve_store(r, ro / "identity.json") == "acme/one"
    finally:
        ro.chmod(0o700)


def test_identity_cache_is_bounded(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(IdentityCache, "MAX_ENTRIES", 3)
    c = IdentityCache(tmp_path / "c.json")
    for i in range(5):
        c.put(f"k{i}", (i, 0, 0), f"s/{i}")
    assert list(_entries(tmp_path / "c.json")) == ["k2", "k3", "k4"]
    assert c.get("k4", (4, 0, 0)) == "s/4"
    assert c.get("k4", (5, 0, 0)) is None
    assert c.get("k0", (0, 0, 0)) is None


_PROBE = """
import sys
from pathlib import Path
from thatch_cli.location.identity import resolve_store
print(resolve_store(Path(sys.argv[1]), Path(sys.argv[2])))
print("dulwich" in sys.modules)
"""


def _probe(cwd: Path, cache: Path) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(cwd), str(cache)],
        env=env, check=True, capture_output=True, text=True,
    ).stdout
    return out.split()


def test_cache_hit_does_not_import_dulwich(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p", "git@h:acme/one.git")
    cache = tmp_path / "identity.json"
    # The miss imports dulwich: shows the probe can see the import at all.
    assert _probe(r, cache) == ["acme/one", "True"]
    assert _probe(r, cache) == ["acme/one", "False"]


def test_module_imports_without_dulwich() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    code = "import sys, thatch_cli.location.identity, thatch_cli.location.gitfs, thatch_cli.location.scope; print('dulwich' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    ).stdout
    assert out.strip() == "False"
    assert repo_mod.UNKNOWN == "unknown"


def test_cache_skips_a_key_it_could_not_read_back(tmp_path: Path) -> None:
    """An entry is one line of tab-separated fields: a path or store with a tab
    or a line break is answered (by detection) but never written."""
    cache = IdentityCache(tmp_path / "identity.tsv")
    cache.put("/odd\tpath/.git", (1, 2, 3), "acme/one")
    cache.put("/plain/.git", (1, 2, 3), "two\nlines")
    assert not (tmp_path / "identity.tsv").exists()
    cache.put("/plain/.git", (1, 2, 3), "acme/one")
    assert cache.get("/plain/.git", (1, 2, 3)) == "acme/one"
    assert cache.get("/plain/.git", (1, 2, 4)) is None
