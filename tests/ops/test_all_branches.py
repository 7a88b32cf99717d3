"""Recall, search and list across every branch, on request: the default
keeps unscoped memories plus the current branch's; --all-branches (MCP
all_branches) adds every other branch's, and each result names its branch."""

from __future__ import annotations

import json

import pytest

from thatch_cli.mcp.server import ToolRunner

from helpers import git


@pytest.fixture
def repo(git_repo, cli):
    path = git_repo("widget", remote="git@github.com:acme/widget.git")
    git(path, "switch", "-q", "-c", "feat/login")
    assert cli("remember", "Login form validation", "the login form validates emails on blur", "--this-branch",
               cwd=path).exit_code == 0
    git(path, "switch", "-q", "main")
    assert cli("remember", "Release steps", "tag, build, upload", cwd=path).exit_code == 0
    return path


def labels_and_branches(data: dict) -> dict[str, str | None]:
    return {r["label"]: r["branch"] for r in data["results"]}


def test_recall_and_search_reach_other_branches_only_when_asked(cli, repo):
    plain = json.loads(cli("recall", "login form validation", "--floor", "0", "--json", cwd=repo).stdout)
    assert "Login form validation" not in labels_and_branches(plain)
    assert plain["branch"] == "main" and plain["all_branches"] is False
    every = json.loads(cli("recall", "login form validation", "--all-branches", "--floor", "0", "--json",
                           cwd=repo).stdout)
    assert labels_and_branches(every)["Login form validation"] == "feat/login"
    assert every["branch"] is None and every["all_branches"] is True
    assert labels_and_branches(every)["Release steps"] is None
    for mode in ("semantic", "lexical"):
        found = json.loads(cli("recall", "login form validation", "--all-branches", "--mode", mode, "--floor", "0",
                               "--json", cwd=repo).stdout)
        assert "Login form validation" in labels_and_branches(found), mode
    searched = json.loads(cli("search", "login form validation", "--all-branches", "--json", cwd=repo).stdout)
    assert labels_and_branches(searched)["Login form validation"] == "feat/login"
    piped = cli("recall", "login form validation", "--all-branches", cwd=repo).stdout
    assert "\tfeat/login\t" in piped  # the plain output's branch column


def test_all_branches_does_not_combine_with_one_branch(cli, repo):
    for args in (["recall", "x", "--all-branches", "--branch", "feat/login"],
                 ["recall", "x", "--all-branches", "--this-branch"],
                 ["list", "--all-branches", "--branch", "feat/login"]):
        result = cli(*args, cwd=repo)
        assert result.exit_code == 2 and "not both" in result.stderr, args


def test_list_all_branches_is_the_default_said_explicitly(cli, repo):
    default = json.loads(cli("list", "--json", cwd=repo).stdout)
    explicit = json.loads(cli("list", "--all-branches", "--json", cwd=repo).stdout)
    assert default == explicit
    assert {m["label"]: m["branch"] for m in explicit["memories"]} == {"Login form validation": "feat/login",
                                                                       "Release steps": None}


def test_the_mcp_tools_take_the_same_choice(repo, isolated_env):
    runner = ToolRunner({**isolated_env, "THATCH_MODEL": "fake:64", "CLAUDE_PROJECT_DIR": str(repo)}, max_chars=20_000)
    plain = runner.call("memory_recall", {"query": "login form validation"}).data
    assert "Login form validation" not in labels_and_branches(plain)
    every = runner.call("memory_recall", {"query": "login form validation", "all_branches": True})
    assert labels_and_branches(every.data)["Login form validation"] == "feat/login"
    assert "acme/widget @ feat/login" in every.text()
    listed = runner.call("memory_list", {"all_branches": True}).data
    assert {m["label"] for m in listed["memories"]} == {"Login form validation", "Release steps"}
    clash = runner.call("memory_list", {"all_branches": True, "branch": "main"}).data["error"]["message"]
    assert clash == "use either branch or all_branches: true, not both"
