"""gitfs against real repositories built with the git CLI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from thatch_cli.location import gitfs
from thatch_cli.location.gitfs import GitLocation

from helpers import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "commit", "-q", "--allow-empty", "-m", "init")
    return path.resolve()


def loc_of(path: Path) -> GitLocation:
    loc = gitfs.locate(path)
    assert loc is not None
    return loc


# --- locate -----------------------------------------------------------------


def test_locate_top_level(repo: Path) -> None:
    assert gitfs.locate(repo) == GitLocation(repo / ".git", repo / ".git", repo)


def test_locate_from_deep_subdirectory(repo: Path) -> None:
    sub = repo / "a" / "b" / "c"
    sub.mkdir(parents=True)
    assert gitfs.locate(sub) == GitLocation(repo / ".git", repo / ".git", repo)


def test_locate_outside_repo(tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    assert gitfs.locate(plain) is None


def test_locate_ignores_git_dir_env(repo: Path, tmp_path: Path, monkeypatch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    assert gitfs.locate(plain) is None


def test_locate_linked_worktree(repo: Path) -> None:
    git(repo, "worktree", "add", "-q", "../wt", "-b", "feat")
    wt = (repo.parent / "wt").resolve()
    (wt / "sub").mkdir()
    expected = GitLocation(repo / ".git" / "worktrees" / "wt", repo / ".git", wt)
    assert gitfs.locate(wt) == expected
    assert gitfs.locate(wt / "sub") == expected
    assert (wt / ".git").is_file()  # the layout this test is meant to cover


def test_locate_relative_gitfile(repo: Path) -> None:
    git(repo, "worktree", "add", "-q", "../wt", "-b", "feat")
    wt = repo.parent / "wt"
    # git writes an absolute path; a relative one must resolve against the
    # directory holding the .git file, not the process cwd.
    (wt / ".git").write_text("gitdir: ../proj/.git/worktrees/wt\n")
    loc = loc_of(wt)
    assert loc.git_dir == repo / ".git" / "worktrees" / "wt"
    assert loc.common_dir == repo / ".git"


def test_locate_separate_git_dir(tmp_path: Path) -> None:
    work, store = tmp_path / "work", tmp_path / "store.git"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", "--separate-git-dir", str(store))
    loc = loc_of(work)
    assert loc.git_dir == loc.common_dir == store.resolve()
    assert loc.worktree == work.resolve()


def test_locate_bare_repo(tmp_path: Path) -> None:
    bare = tmp_path / "foo.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    bare = bare.resolve()
    assert gitfs.locate(bare) == GitLocation(bare, bare, None)
    assert gitfs.locate(bare / "refs" / "heads") == GitLocation(bare, bare, None)


def test_locate_skips_stray_dot_git_dir(repo: Path) -> None:
    sub = repo / "vendored"
    (sub / ".git").mkdir(parents=True)  # empty: not a repository
    assert loc_of(sub).worktree == repo


# --- HEAD -------------------------------------------------------------------


def test_head_branch_main_and_unborn(repo: Path, tmp_path: Path) -> None:
    assert gitfs.head_branch(loc_of(repo)) == "main"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "trunk")
    assert gitfs.head_branch(loc_of(fresh)) == "trunk"


def test_head_branch_with_slashes(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature/deep/name")
    assert gitfs.head_branch(loc_of(repo)) == "feature/deep/name"


def test_head_branch_detached(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    assert gitfs.head_branch(loc_of(repo)) is None


def test_head_branch_linked_worktree_is_its_own(repo: Path) -> None:
    git(repo, "worktree", "add", "-q", "../wt", "-b", "feat/x")
    assert gitfs.head_branch(loc_of(repo.parent / "wt")) == "feat/x"
    assert gitfs.head_branch(loc_of(repo)) == "main"


def test_head_branch_unreadable(tmp_path: Path) -> None:
    loc = GitLocation(tmp_path / "nope", tmp_path / "nope", None)
    assert gitfs.head_branch(loc) is None
    assert isinstance(gitfs.head_signature(loc), str)


def test_head_signature_tracks_head(repo: Path, tmp_path: Path) -> None:
    loc = loc_of(repo)
    before = gitfs.head_signature(loc)
    assert gitfs.head_signature(loc) == before
    git(repo, "checkout", "-q", "-b", "other")
    after = gitfs.head_signature(loc)
    assert after != before
    git(repo, "checkout", "-q", "--detach")
    assert gitfs.head_signature(loc) not in (before, after)
    # Another repository on the same branch name must not look identical.
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    git(repo, "checkout", "-q", "main")
    assert gitfs.head_signature(loc) == before
    assert gitfs.head_signature(loc_of(other)) != before


# --- branches ---------------------------------------------------------------


def test_branch_exists_loose_packed_and_deleted(repo: Path) -> None:
    git(repo, "branch", "feat/a/b")
    git(repo, "branch", "gone")
    loc = loc_of(repo)
    assert (repo / ".git/refs/heads/feat/a/b").is_file()
    assert gitfs.branch_exists(loc, "feat/a/b")
    assert gitfs.branch_exists(loc, "gone")
    assert not gitfs.branch_exists(loc, "feat")  # a directory, not a ref
    assert not gitfs.branch_exists(loc, "nope")

    git(repo, "pack-refs", "--all")
    assert not (repo / ".git/refs/heads/feat/a/b").exists()
    assert gitfs.branch_exists(loc, "feat/a/b")
    assert gitfs.branch_exists(loc, "main")

    git(repo, "branch", "-D", "gone")  # removes the packed entry
    assert not gitfs.branch_exists(loc, "gone")
    assert gitfs.branch_exists(loc, "feat/a/b")


def test_branch_exists_deleted_loose(repo: Path) -> None:
    git(repo, "branch", "tmp/x")
    loc = loc_of(repo)
    assert gitfs.branch_exists(loc, "tmp/x")
    git(repo, "branch", "-D", "tmp/x")
    assert not gitfs.branch_exists(loc, "tmp/x")


@pytest.mark.parametrize(
    "name", ["", "/main", "main/", "../config", "a/../../config", "main.lock", "a//b"]
)
def test_branch_exists_rejects_path_escapes(repo: Path, name: str) -> None:
    (repo / ".git" / "refs" / "heads" / "main.lock").write_text("x\n")
    assert not gitfs.branch_exists(loc_of(repo), name)


def test_branch_exists_from_worktree_sees_shared_refs(repo: Path) -> None:
    git(repo, "worktree", "add", "-q", "../wt", "-b", "feat")
    git(repo, "branch", "made-in-main")
    wt = loc_of(repo.parent / "wt")
    assert gitfs.branch_exists(wt, "made-in-main")
    assert gitfs.branch_exists(loc_of(repo), "feat")


def test_branch_exists_reftable_is_conservative(repo: Path) -> None:
    (repo / ".git" / "reftable").mkdir()
    assert gitfs.branch_exists(loc_of(repo), "whatever")


def test_local_branches(repo: Path) -> None:
    git(repo, "branch", "one")
    git(repo, "branch", "feat/a/b")
    git(repo, "pack-refs", "--all")
    git(repo, "branch", "loose/after-pack")
    git(repo, "branch", "gone")
    git(repo, "tag", "-a", "-m", "t", "v1")  # tags + peeled lines must not leak
    git(repo, "pack-refs", "--all")
    git(repo, "branch", "-D", "gone")
    git(repo, "branch", "late")
    (repo / ".git" / "refs" / "heads" / "late.lock").write_text("x\n")
    assert "^" in (repo / ".git" / "packed-refs").read_text()
    assert gitfs.local_branches(loc_of(repo)) == {
        "main", "one", "feat/a/b", "loose/after-pack", "late",
    }


def test_local_branches_from_worktree(repo: Path) -> None:
    git(repo, "worktree", "add", "-q", "../wt", "-b", "feat")
    assert gitfs.local_branches(loc_of(repo.parent / "wt")) == {"main", "feat"}


# --- config stamp -----------------------------------------------------------


def test_config_stamp_changes_with_config(repo: Path) -> None:
    loc = loc_of(repo)
    s0 = gitfs.config_stamp(loc)
    assert gitfs.config_stamp(loc) == s0
    git(repo, "remote", "add", "origin", "git@h:a/b.git")
    s1 = gitfs.config_stamp(loc)
    assert s1 != s0
    # A same-length rewrite inside one timestamp tick: pin mtime back so
    # only the inode (git rewrites config via lock file + rename) differs.
    git(repo, "remote", "set-url", "origin", "git@h:a/c.git")
    os.utime(repo / ".git" / "config", ns=(s1[0], s1[0]))
    assert gitfs.config_stamp(loc)[:2] == s1[:2]
    assert gitfs.config_stamp(loc) != s1


def test_config_stamp_missing_config(tmp_path: Path) -> None:
    loc = GitLocation(tmp_path, tmp_path, None)
    assert gitfs.config_stamp(loc) == gitfs.config_stamp(loc)
