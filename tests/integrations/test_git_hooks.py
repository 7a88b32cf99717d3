"""`thatch hooks` and the hooks themselves, driven by real git.

conftest points the database, cache and git config at tmp dirs.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from thatch_cli.integrations import githooks
from thatch_cli.integrations.shell import sh_quote
from thatch_cli.memory.records import Memory
from thatch_cli.storage.memories import MemoryDB
from thatch_cli.support.errors import Conflict, NotFound

from helpers import ODD_EXE, ORIGINAL_SCHEMA, THATCH

HOOKS = githooks.HOOK_NAMES


def git(cwd: Path, *args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                            env={**os.environ, **(env or {})})
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result


def thatch(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([THATCH, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def thatch_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("thatch:")]


def seed(memories: dict[str | None, int], store: str = "acme/widget") -> None:
    db = MemoryDB.open(Path(os.environ["THATCH_DB"]))
    for branch, count in memories.items():
        for i in range(count):
            slug = f"{branch or 'all'}-{i}".replace("/", "-")
            db.save(Memory(store=store, slug=slug, label=f"{branch or 'general'} note {i}", content="x",
                           branch=branch, created_at="2026-01-01T00:00:00.000Z",
                           updated_at=f"2026-01-01T00:00:{i:02d}.000Z"),
                    overwrite=False, archived=None)
    db.close()


def deletions() -> list[tuple]:
    conn = sqlite3.connect(os.environ["THATCH_DB"])
    try:
        return conn.execute("SELECT store, branch, memories FROM thatch_cli_deleted_branches ORDER BY branch").fetchall()
    finally:
        conn.close()


@pytest.fixture
def repo(tmp_path) -> Path:
    path = tmp_path / "widget"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "file.txt").write_text("one\n")
    git(path, "add", "file.txt")
    git(path, "commit", "-q", "-m", "init")
    git(path, "remote", "add", "origin", "git@github.com:acme/widget.git")
    for branch in ("feat/login", "feat/many", "empty", "old-name"):
        git(path, "branch", branch)
    seed({"feat/login": 3, "feat/many": 7, "old-name": 2, None: 4})
    return path


def hook_path(repo: Path, name: str) -> Path:
    return repo / ".git" / "hooks" / name


def install(repo: Path, **env) -> subprocess.CompletedProcess:
    result = thatch("hooks", "install", "--repo", str(repo), cwd=repo.parent, env=env)
    assert result.returncode == 0, result.stderr
    return result


# -- templates ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", HOOKS)
def test_hook_scripts_parse_and_pass_shellcheck(name):
    text = githooks.render_hook(name, ODD_EXE)
    assert githooks.MARKER in text and githooks.PLACEHOLDER not in text and sh_quote(ODD_EXE) in text
    result = subprocess.run(["sh", "-n", "/dev/stdin"], input=text, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    result = subprocess.run(["shellcheck", "--shell=sh", "-"], input=text, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


# -- install / uninstall / status -------------------------------------------------------------


def test_install_is_idempotent_and_byte_identical(repo):
    first = json.loads(thatch("hooks", "install", "--json", cwd=repo).stdout)
    assert [h["action"] for h in first["hooks"]] == ["installed", "installed"]
    assert first["hooks_dir"] == str(repo / ".git" / "hooks")
    before = {}
    for name in HOOKS:
        path = hook_path(repo, name)
        assert stat.S_IMODE(path.stat().st_mode) == 0o755
        assert path.read_text() == githooks.render_hook(name, THATCH)
        before[name] = (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino)
    again = json.loads(thatch("hooks", "install", "--json", cwd=repo / ".git").stdout)
    assert [h["action"] for h in again["hooks"]] == ["unchanged", "unchanged"]
    for name in HOOKS:
        path = hook_path(repo, name)
        assert (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino) == before[name]
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir() if "thatch" in p.name or p.name in HOOKS) \
        == sorted(HOOKS)


def test_status_reports_each_state(repo):
    def states():
        data = json.loads(thatch("hooks", "status", "--json", cwd=repo).stdout)
        assert set(data) == {"common_dir", "hooks_dir", "core_hooks_path", "active", "hooks"}
        return {h["name"]: (h["state"], h["current"]) for h in data["hooks"]}

    assert states() == {"post-checkout": ("missing", None), "reference-transaction": ("missing", None)}
    foreign = hook_path(repo, "post-checkout")
    foreign.write_text("#!/bin/sh\nexit 0\n")
    foreign.chmod(0o755)
    assert states()["post-checkout"] == ("foreign", None)
    install(repo)
    assert states() == {"post-checkout": ("chained", True), "reference-transaction": ("installed", True)}
    text = thatch("hooks", "status", cwd=repo).stdout
    assert "runs your previous hook first (kept as post-checkout.thatch-legacy)" in text
    assert f"hooks directory: {repo / '.git' / 'hooks'}" in text
    # Installed by another thatch (another path): reported, and install updates it.
    githooks.install(repo, "/elsewhere/thatch")
    assert states()["reference-transaction"] == ("installed", False)
    assert "outdated" in thatch("hooks", "status", cwd=repo).stdout
    again = json.loads(thatch("hooks", "install", "--json", cwd=repo).stdout)
    assert [h["action"] for h in again["hooks"]] == ["updated", "updated"]


def test_uninstall_restores_the_original_byte_for_byte(repo):
    original = b"#!/bin/sh\n# someone's hook\r\necho 'legacy ran' \"$@\"\nexit 3\n\x00\xff"
    path = hook_path(repo, "post-checkout")
    path.write_bytes(original)
    path.chmod(0o750)
    install(repo)
    legacy = path.with_name("post-checkout.thatch-legacy")
    assert legacy.read_bytes() == original and stat.S_IMODE(legacy.stat().st_mode) == 0o750
    result = thatch("hooks", "uninstall", "--json", cwd=repo)
    assert [h["action"] for h in json.loads(result.stdout)["hooks"]] == ["restored", "removed"]
    assert path.read_bytes() == original and stat.S_IMODE(path.stat().st_mode) == 0o750
    assert not legacy.exists() and not hook_path(repo, "reference-transaction").exists()
    # Nothing of thatch's left: uninstall again is a no-op.
    assert thatch("hooks", "uninstall", cwd=repo).returncode == 0
    assert path.read_bytes() == original


def test_foreign_hook_and_stray_legacy_refuses_without_touching_anything(repo):
    for name in (githooks.LEGACY_SUFFIX, ""):
        p = hook_path(repo, "post-checkout" + name)
        p.write_text(f"#!/bin/sh\n# {name or 'current'}\n")
        p.chmod(0o755)
    result = thatch("hooks", "install", cwd=repo)
    assert result.returncode == 4 and len(result.stderr.splitlines()) == 1, result.stderr
    assert not hook_path(repo, "reference-transaction").exists()


def test_core_hooks_path_is_refused_with_one_line(repo):
    git(repo, "config", "core.hooksPath", ".husky")
    result = thatch("hooks", "install", cwd=repo)
    assert result.returncode == 4
    assert len(result.stderr.splitlines()) == 1 and "core.hooksPath is set to .husky" in result.stderr
    assert not any(hook_path(repo, n).exists() for n in HOOKS)
    status = json.loads(thatch("hooks", "status", "--json", cwd=repo).stdout)
    assert status["core_hooks_path"] == ".husky" and status["active"] is False
    # Pointing at the default directory is no override at all.
    git(repo, "config", "core.hooksPath", ".git/hooks")
    install(repo)


def test_not_a_repository(tmp_path):
    result = thatch("hooks", "status", "--repo", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 3 and "not inside a git repository" in result.stderr
    with pytest.raises(NotFound):
        githooks.status(tmp_path)


# -- post-checkout ------------------------------------------------------------------------------


def test_switch_prints_one_line_for_a_branch_with_memories(repo):
    install(repo)
    out = git(repo, "switch", "feat/login").stderr
    assert thatch_lines(out) == ["thatch: 3 memories on feat/login in acme/widget (thatch list --this-branch)"]
    out = git(repo, "checkout", "feat/many").stderr
    assert thatch_lines(out) == ["thatch: 7 memories on feat/many in acme/widget (thatch list --this-branch)"]
    assert thatch_lines(git(repo, "switch", "empty").stderr) == []
    # A shell whose shell hook reports switches (it exports THATCH_SHELL_HOOK): the hook stays quiet.
    assert thatch_lines(git(repo, "switch", "feat/login", env={"THATCH_SHELL_HOOK": "bash"}).stderr) == []
    # A file checkout (flag 0) says nothing, even on a branch with memories.
    git(repo, "switch", "-q", "feat/login")
    (repo / "file.txt").write_text("changed\n")
    assert thatch_lines(git(repo, "checkout", "--", "file.txt").stderr) == []
    # Detached HEAD: no branch, nothing to list.
    assert thatch_lines(git(repo, "switch", "--detach", "main").stderr) == []


def test_linked_worktrees_share_the_hooks(repo, tmp_path):
    git(repo, "worktree", "add", "-q", "-b", "wt", str(tmp_path / "wt"))
    result = json.loads(thatch("hooks", "install", "--json", cwd=tmp_path / "wt").stdout)
    assert result["hooks_dir"] == str(repo / ".git" / "hooks")
    out = git(tmp_path / "wt", "switch", "feat/login").stderr
    assert "thatch: 3 memories on feat/login in acme/widget" in out
    # `git worktree add` checks the branch out in the new worktree: same message there.
    out = git(repo, "worktree", "add", str(tmp_path / "wt2"), "feat/many").stderr
    assert "thatch: 7 memories on feat/many in acme/widget" in out


# -- reference-transaction ------------------------------------------------------------------------


def test_a_switch_in_a_shell_with_the_shell_hook_starts_no_thatch_process(repo, tmp_path):
    """The shell hook says the switch at the next prompt, so post-checkout
    leaves at once: a branch switch pays for no Python start."""
    log = tmp_path / "starts.log"
    wrapper = tmp_path / "thatch-wrapper"
    wrapper.write_text(f"#!/bin/sh\necho \"$*\" >> {sh_quote(str(log))}\nexec {sh_quote(THATCH)} \"$@\"\n")
    wrapper.chmod(0o755)
    githooks.install(repo, str(wrapper))
    result = git(repo, "switch", "feat/login", env={"THATCH_SHELL_HOOK": "bash"})
    assert thatch_lines(result.stderr) == [] and not log.exists()
    result = git(repo, "switch", "feat/many", env={"THATCH_SHELL_HOOK": ""})  # set but empty: no shell hook
    assert thatch_lines(result.stderr) == ["thatch: 7 memories on feat/many in acme/widget (thatch list --this-branch)"]
    assert log.read_text().startswith("_githook post-checkout ")


def _counting_wrapper(repo: Path, tmp_path: Path) -> Path:
    """Install the hooks through a wrapper that logs each thatch start; returns the log."""
    log = tmp_path / "starts.log"
    wrapper = tmp_path / "thatch-wrapper"
    wrapper.write_text(f"#!/bin/sh\necho \"$*\" >> {sh_quote(str(log))}\nexec {sh_quote(THATCH)} \"$@\"\n")
    wrapper.chmod(0o755)
    githooks.install(repo, str(wrapper))
    return log


def _starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def _age(repo: Path) -> None:
    """Date the database, its log and the repository's config a minute back:
    the switch cache is written only from files that have been still for 2 s."""
    db = os.environ["THATCH_DB"]
    for path in (db, db + "-wal", str(repo / ".git" / "config")):
        if os.path.exists(path):
            past = os.stat(path).st_mtime - 60
            os.utime(path, (past, past))


def _python_says(repo: Path) -> list[str]:
    """What `thatch _githook post-checkout` says on the branch checked out (run by hand: it writes no cache)."""
    return thatch_lines(thatch("_githook", "post-checkout", "0" * 40, "0" * 40, "1", cwd=repo).stdout)


def test_a_switch_says_the_cached_line_and_starts_no_thatch_process(repo, tmp_path):
    """Point 8: once thatch has run post-checkout, switches say the line from
    <git dir>/thatch-switch with no Python start, word for word what thatch
    says, until the database changes."""
    log = _counting_wrapper(repo, tmp_path)
    # Just written: a database that changed in the last 2 s gets no cache, so every switch asks thatch.
    git(repo, "switch", "-q", "feat/login")
    git(repo, "switch", "-q", "main")
    assert _starts(log) == 2 and not (repo / ".git" / "thatch-switch").exists()
    _age(repo)
    first = git(repo, "switch", "feat/login")
    assert thatch_lines(first.stderr) == ["thatch: 3 memories on feat/login in acme/widget (thatch list --this-branch)"]
    assert _starts(log) == 3 and (repo / ".git" / "thatch-switch").exists()
    for branch in ("feat/many", "empty", "main", "old-name", "feat/login"):
        said = thatch_lines(git(repo, "switch", branch).stderr)
        assert said == _python_says(repo), branch
    assert _starts(log) == 3  # five switches, no thatch process
    (repo / ".git" / "thatch-switch").unlink()
    _python_says(repo)
    assert not (repo / ".git" / "thatch-switch").exists()  # a hand-written hook's call leaves no file
    git(repo, "switch", "-q", "feat/login")
    assert _starts(log) == 4
    # A memory saved on the branch since: the cache is stale, thatch says the new count.
    db = MemoryDB.open(Path(os.environ["THATCH_DB"]))
    db.save(Memory(store="acme/widget", slug="late", label="late note", content="x", branch="feat/many",
                   created_at="2026-01-02T00:00:00.000Z", updated_at="2026-01-02T00:00:00.000Z"),
            overwrite=False, archived=None)
    db.close()
    said = thatch_lines(git(repo, "switch", "feat/many").stderr)
    assert said == ["thatch: 8 memories on feat/many in acme/widget (thatch list --this-branch)"] == _python_says(repo)
    assert _starts(log) == 5
    # Forgotten through thatch itself: said right again after that change too.
    assert thatch("forget", "late", cwd=repo).returncode == 0
    git(repo, "switch", "-q", "main")
    said = thatch_lines(git(repo, "switch", "feat/many").stderr)
    assert said == ["thatch: 7 memories on feat/many in acme/widget (thatch list --this-branch)"] == _python_says(repo)
    assert _starts(log) == 7


@pytest.mark.parametrize("case", ["garbled", "truncated", "other store", "other database", "config changed"])
def test_a_cache_that_cannot_be_trusted_asks_thatch(repo, tmp_path, case):
    log = _counting_wrapper(repo, tmp_path)
    _age(repo)
    git(repo, "switch", "-q", "feat/login")
    cache = repo / ".git" / "thatch-switch"
    stamp = cache.stat().st_mtime
    env: dict[str, str] = {}
    if case == "garbled":
        cache.write_bytes(b"\x00\xffnot a cache\n")
    elif case == "truncated":
        cache.write_bytes(cache.read_bytes().rsplit(b"\n.\n", 1)[0] + b"\n")
    elif case == "other store":
        env = {"THATCH_STORE": "acme/other"}
    elif case == "other database":
        other = tmp_path / "other.db"
        MemoryDB.open(other).close()
        env = {"THATCH_DB": str(other)}
    else:
        git(repo, "config", "remote.origin.url", "git@github.com:acme/renamed.git")
    os.utime(cache, (stamp, stamp))
    switched = git(repo, "switch", "feat/many", env=env)
    assert switched.returncode == 0 and _starts(log) == 2
    # Another store or database (the remote now names acme/renamed) has no memories on feat/many.
    expected = ["thatch: 7 memories on feat/many in acme/widget (thatch list --this-branch)"]
    if case in ("other store", "other database", "config changed"):
        expected = []
    assert thatch_lines(switched.stderr) == expected


def test_uninstall_removes_the_switch_cache(repo, tmp_path):
    git(repo, "worktree", "add", "-q", "-b", "wt", str(tmp_path / "wt"))
    install(repo)
    _age(repo)
    git(repo, "switch", "-q", "feat/login")
    git(tmp_path / "wt", "switch", "-q", "feat/many")
    caches = [repo / ".git" / "thatch-switch", repo / ".git" / "worktrees" / "wt" / "thatch-switch"]
    assert [c.exists() for c in caches] == [True, True]
    assert thatch("hooks", "uninstall", cwd=repo).returncode == 0
    assert not any(c.exists() for c in caches)


def test_branch_deletion_is_recorded_and_announced_once(repo):
    install(repo)
    out = git(repo, "branch", "-d", "feat/login").stderr
    assert thatch_lines(out) == [
        "thatch: 3 memories were scoped to deleted branch feat/login — run 'thatch hygiene'"]
    assert deletions() == [("acme/widget", "feat/login", 3)]
    # A packed ref (git fires the hook once per refs file it rewrites) and -D.
    git(repo, "pack-refs", "--all")
    assert deletions() == [("acme/widget", "feat/login", 3)]  # packing deletes loose refs: not deletions
    out = git(repo, "branch", "-D", "feat/many").stderr
    assert thatch_lines(out) == ["thatch: 7 memories were scoped to deleted branch feat/many — run 'thatch hygiene'"]
    # No memories: recorded, not announced.
    assert thatch_lines(git(repo, "branch", "-d", "empty").stderr) == []
    assert deletions() == [("acme/widget", "empty", 0), ("acme/widget", "feat/login", 3),
                           ("acme/widget", "feat/many", 7)]


def test_a_database_no_thatch_command_upgraded_still_counts_and_reports(repo):
    """The original thatch's file, before any thatch command opened it: the
    hook never upgrades it (so it records nothing), but still counts the
    deleted branch's memories and says so, once per deletion."""
    db = Path(os.environ["THATCH_DB"])
    db.unlink()
    conn = sqlite3.connect(db)
    conn.executescript(ORIGINAL_SCHEMA + "INSERT INTO stores VALUES ('acme/widget');")
    for i in range(2):
        conn.execute("INSERT INTO entries (slug, store, label, content, branch, created_at, updated_at)"
                     " VALUES (?, 'acme/widget', ?, 'x', 'feat/login', 't', 't')", (f"n{i}", f"n{i}"))
    conn.commit()
    conn.close()
    before = db.read_bytes()
    install(repo)
    git(repo, "pack-refs", "--all")  # git then fires the hook for the loose ref and for packed-refs
    out = git(repo, "branch", "-D", "feat/login").stderr
    assert thatch_lines(out) == [
        "thatch: 2 memories were scoped to deleted branch feat/login — run 'thatch hygiene'"]
    assert db.read_bytes() == before  # never upgraded, nothing written
    assert thatch_lines(git(repo, "branch", "-D", "empty").stderr) == []


def test_rename_is_not_a_deletion(repo):
    install(repo)
    out = git(repo, "branch", "-m", "old-name", "new-name").stderr
    assert thatch_lines(out) == [
        "thatch: 2 memories are scoped to old-name, renamed to new-name"
        " — run 'thatch rescope --from old-name --to new-name'"]
    git(repo, "switch", "-q", "new-name")
    git(repo, "pack-refs", "--all")
    out = git(repo, "branch", "-m", "newest").stderr  # the current branch, packed
    assert thatch_lines(out) == []  # no memories on new-name: nothing to say
    assert deletions() == []


def test_other_ref_updates_start_no_process(repo, tmp_path):
    log = tmp_path / "starts.log"
    wrapper = tmp_path / "thatch-wrapper"
    wrapper.write_text(f"#!/bin/sh\necho \"$*\" >> {sh_quote(str(log))}\nexec {sh_quote(THATCH)} \"$@\"\n")
    wrapper.chmod(0o755)
    githooks.install(repo, str(wrapper))
    git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    git(repo, "branch", "fresh")
    git(repo, "tag", "v1")
    git(repo, "update-ref", "refs/notes/x", "HEAD")
    git(repo, "fetch", "-q", str(repo), "+refs/heads/*:refs/remotes/self/*")
    git(repo, "update-ref", "-d", "refs/remotes/self/fresh")
    assert not log.exists()
    git(repo, "branch", "-D", "fresh")
    # Git reports the deletion twice; the script skips the packed-refs half.
    assert re.fullmatch(r"_githook branch-deleted --git-pid \d+ -- fresh\n", log.read_text())
    # Packing drops loose refs, which looks like deletion to the shell filter;
    # thatch then finds the branches still there and stays quiet.
    assert thatch_lines(git(repo, "pack-refs", "--all").stderr) == []
    assert deletions() == [("acme/widget", "fresh", 0)]


def test_legacy_hooks_keep_their_input_output_and_status(repo, tmp_path):
    seen = tmp_path / "legacy-input"
    rt = hook_path(repo, "reference-transaction")
    rt.write_text(f"#!/bin/sh\n{{ echo \"== $1\"; cat; }} >> {sh_quote(str(seen))}\n"
                  f"[ \"$1\" = prepared ] && [ -e {sh_quote(str(tmp_path / 'veto'))} ] && exit 1\nexit 0\n")
    rt.chmod(0o755)
    pc = hook_path(repo, "post-checkout")
    pc.write_text("#!/bin/sh\necho \"legacy post-checkout $3\"\nexit 3\n")
    pc.chmod(0o755)
    alone = git(repo, "switch", "feat/many", check=False).returncode
    git(repo, "switch", "-q", "main", check=False)
    install(repo)
    switched = git(repo, "switch", "feat/login", check=False)
    # post-checkout's status is git switch's: the legacy failure comes through
    # exactly as without thatch, and thatch still adds its lines.
    assert switched.returncode == alone != 0
    assert "legacy post-checkout 1" in switched.stdout + switched.stderr
    assert "thatch: 3 memories on feat/login" in switched.stderr
    git(repo, "switch", "-q", "main", check=False)
    seen.write_text("")
    deleted = git(repo, "branch", "-D", "feat/login")
    assert "memories were scoped to deleted branch feat/login" in deleted.stderr
    blocks = seen.read_text().split("== ")[1:]
    assert any(b.startswith("committed\n") and b.endswith(" refs/heads/feat/login\n") for b in blocks), blocks
    # The legacy hook's veto in "prepared" still aborts the update.
    (tmp_path / "veto").touch()
    assert git(repo, "branch", "vetoed", check=False).returncode != 0
    assert "vetoed" not in git(repo, "branch", "--list").stdout


def test_thatch_hooks_0_switches_thatch_off_but_not_the_legacy_hook(repo):
    pc = hook_path(repo, "post-checkout")
    pc.write_text("#!/bin/sh\necho legacy-ran\n")
    pc.chmod(0o755)
    install(repo)
    out = git(repo, "switch", "feat/login", env={"THATCH_HOOKS": "0"})
    assert "legacy-ran" in out.stdout + out.stderr and thatch_lines(out.stderr) == []
    assert thatch_lines(git(repo, "branch", "-D", "feat/many", env={"THATCH_HOOKS": "0"}).stderr) == []
    assert deletions() == []


@pytest.mark.parametrize("breakage", ["directory", "corrupt"])
def test_broken_database_never_blocks_git(repo, tmp_path, breakage):
    install(repo)
    bad = tmp_path / "bad.db"
    if breakage == "directory":
        bad.mkdir()
    else:
        bad.write_bytes(b"this is not sqlite" * 100)
    env = {"THATCH_DB": str(bad)}
    switched = git(repo, "switch", "feat/login", env=env)
    assert len(thatch_lines(switched.stderr)) <= 1 and "Traceback" not in switched.stderr
    git(repo, "switch", "-q", "main")
    deleted = git(repo, "branch", "-D", "feat/many", env=env)
    assert len(thatch_lines(deleted.stderr)) <= 1 and "Traceback" not in deleted.stderr
    assert "feat/many" not in git(repo, "branch", "--list").stdout


def test_missing_executable_never_blocks_git(repo):
    githooks.install(repo, "/nonexistent/bin/thatch")
    switched = git(repo, "switch", "feat/login")
    assert thatch_lines(switched.stderr) == [
        "thatch: hook skipped, /nonexistent/bin/thatch is gone (reinstall thatch, or run 'thatch hooks uninstall')"]
    git(repo, "switch", "-q", "main")
    deleted = git(repo, "branch", "-D", "feat/many")
    assert len(thatch_lines(deleted.stderr)) == 1
    assert "feat/many" not in git(repo, "branch", "--list").stdout


def test_library_refuses_conflicting_legacy(repo):
    for suffix in ("", githooks.LEGACY_SUFFIX):
        p = hook_path(repo, "reference-transaction" + suffix)
        p.write_text("#!/bin/sh\n")
    with pytest.raises(Conflict):
        githooks.install(repo, THATCH)
    assert not hook_path(repo, "post-checkout").exists()


def test_python_entry_point_is_the_same_program(repo):
    """`python -m thatch_cli hooks install` still embeds the thatch executable."""
    result = subprocess.run([sys.executable, "-m", "thatch_cli", "hooks", "install"], cwd=repo,
                            capture_output=True, text=True,
                            env={**os.environ, "PATH": f"{Path(THATCH).parent}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    assert hook_path(repo, "post-checkout").read_text() == githooks.render_hook("post-checkout", THATCH)


# -- the branch-deleted logic, without git's timing ------------------------------------------------


def test_record_deletion_is_idempotent_within_a_window(repo):
    from thatch_cli.storage.fastread import record_deletion
    from thatch_cli.storage.opening import open_database

    conn = open_database(Path(os.environ["THATCH_DB"]))[0]
    try:
        assert record_deletion(conn, "acme/widget", "feat/login", "2026-01-01T10:00:00.000Z") == 3
        assert record_deletion(conn, "acme/widget", "feat/login", "2026-01-01T10:00:05.000Z") is None
        # Recreated and deleted again much later: a new deletion.
        assert record_deletion(conn, "acme/widget", "feat/login", "2026-01-02T10:00:00.000Z") == 3
        rows = conn.execute("SELECT deleted_at FROM thatch_cli_deleted_branches").fetchall()
        assert rows == [("2026-01-02T10:00:00.000Z",)]
        # The same git command firing the hook again: one deletion.
        assert record_deletion(conn, "acme/widget", "feat/login", "2026-01-03T10:00:00.000Z", git_pid=41) == 3
        assert record_deletion(conn, "acme/widget", "feat/login", "2026-01-03T10:00:01.000Z", git_pid=41) is None
        # Recreated and deleted again by another git command within the window: recorded again.
        assert record_deletion(conn, "acme/widget", "feat/login", "2026-01-03T10:00:09.000Z", git_pid=57) == 3
        rows = conn.execute("SELECT deleted_at, git_pid FROM thatch_cli_deleted_branches").fetchall()
        assert rows == [("2026-01-03T10:00:09.000Z", 57)]
    finally:
        conn.close()


def test_rename_signals(repo, capsys, monkeypatch):
    from thatch_cli.hot.githook import branch_deleted, rename_target

    assert rename_target(["git", "branch", "-m", "a", "b"], "a") == "b"
    assert rename_target(["git", "-C", "x", "branch", "-M", "b"], "a") == "b"
    assert rename_target(["git", "branch", "--move", "c", "d"], "a") is None
    assert rename_target(["git", "branch", "-d", "a"], "a") is None
    git(repo, "update-ref", "-d", "refs/heads/old-name")
    # Newer git puts both halves of a rename in one transaction.
    git(repo, "branch", "renamed")
    branch_deleted(os.environ, repo, ["old-name"], ["renamed"], None)
    assert "2 memories are scoped to old-name, renamed to renamed" in capsys.readouterr().out
    # git 2.39 without /proc: only the parked reflog says a rename is under way.
    parked = repo / ".git" / "logs" / "refs" / ".tmp-renamed-log"
    parked.write_text("")
    branch_deleted(os.environ, repo, ["old-name"], [], None)
    assert "which was renamed — run 'thatch rescope --from old-name --to NEW-NAME'" in capsys.readouterr().out
    parked.unlink()
    assert deletions() == []
    branch_deleted(os.environ, repo, ["old-name"], [], None)
    assert "deleted branch old-name" in capsys.readouterr().out
    assert deletions() == [("acme/widget", "old-name", 2)]
