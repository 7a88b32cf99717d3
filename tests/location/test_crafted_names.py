"""A store name from a crafted remote URL or a branch name from a crafted
HEAD is refused when a command would write it (one line, exit 2), and the
machine-facing hot paths stay silent about it: no escape sequence reaches
a terminal either way."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import git

ENV = {"THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0"}
EVIL = "\x1b]0;pwned\x07"


def hot(args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "thatch_cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=30, env={**os.environ, **ENV})


def test_a_store_detected_from_a_crafted_remote_url_is_refused(cli, git_repo):
    repo = git_repo("widget")
    config = repo / ".git" / "config"
    config.write_text(config.read_text() + f'[remote "origin"]\n\turl = git@github.com:acme/wid{EVIL}get.git\n')
    for args in (["remember", "note", "text"], ["list"], ["export"]):
        result = cli(*args, cwd=repo, **ENV)
        assert result.exit_code == 2, (args, result)
        line = result.stderr
        assert line.count("\n") == 1 and line.startswith("thatch: error: the store detected from the origin"
                                                         " remote's URL or the directory name is not usable")
        assert "\x1b" not in line and "\x07" not in line and "pass --store NAME" in line
    assert cli("remember", "note", "text", "--store", "acme/widget", cwd=repo, **ENV).exit_code == 0
    prompt = hot(["_hook", "prompt"], repo)
    assert prompt.returncode == 0 and "\x1b" not in prompt.stdout and prompt.stdout.count("\n") == 1


def test_a_branch_read_from_a_crafted_head_is_refused_at_write_time(cli, git_repo):
    repo = git_repo("widget", remote="git@github.com:acme/widget.git")
    (repo / ".git" / "HEAD").write_text(f"ref: refs/heads/feat{EVIL}\n")
    result = cli("remember", "note", "text", "--this-branch", cwd=repo, **ENV)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "branch name (--this-branch, read from HEAD)" in result.stderr and "control character" in result.stderr
    assert "\x1b" not in result.stderr
    assert cli("remember", "note", "text", cwd=repo, **ENV).exit_code == 0  # unscoped writes still work
    assert cli("recall", "text", cwd=repo, **ENV).exit_code == 0
    for args in (["_hook", "prompt"], ["_githook", "post-checkout", "0", "0", "1"], ["_complete", "branches"]):
        result = hot(args, repo)
        assert result.returncode == 0 and result.stderr == "" and "\x1b" not in result.stdout, args
        assert "pwned" not in result.stdout or "\\x1b" in result.stdout


def test_re_deleting_a_branch_soon_after_is_recorded_again(cli, git_repo, isolated_env):
    """Delete, recreate and delete again within the window that absorbs git
    firing reference-transaction several times for one deletion."""
    import sqlite3

    repo = git_repo("widget", remote="git@github.com:acme/widget.git")
    git(repo, "branch", "topic")
    assert cli("remember", "wip", "work in progress", "--branch", "topic", cwd=repo, **ENV).exit_code == 0
    assert cli("hooks", "install", cwd=repo, **ENV).exit_code == 0
    env = {**os.environ, **ENV, "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}

    def run_git(*args):
        return subprocess.run(["git", *args], cwd=repo, env={k: v for k, v in env.items()
                                                             if not k.startswith("GIT_DIR")},
                              capture_output=True, text=True, check=True)

    first = run_git("branch", "-D", "topic")
    assert "1 memory was scoped to deleted branch topic" in first.stderr
    run_git("branch", "topic")
    second = run_git("branch", "-D", "topic")
    assert "1 memory was scoped to deleted branch topic" in second.stderr
    conn = sqlite3.connect(isolated_env["THATCH_DB"])
    [(pid,)] = conn.execute("SELECT git_pid FROM thatch_cli_deleted_branches WHERE branch = 'topic'").fetchall()
    conn.close()
    assert pid
