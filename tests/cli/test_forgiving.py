"""Forgiving input and clear errors: mistyped stores, labels and commands get
a did-you-mean, writes never cross stores unasked, retries succeed, and every
error is one line (one JSON object with --json). Each case runs the real
entry point (fast path first, Typer for help and usage errors)."""

import json
import os
import subprocess

import pytest

from thatch_cli.storage.memories import MemoryDB

from helpers import git, thatch_process


def one_error(result, code: int) -> str:
    """The one error line of a failed run."""
    assert result.exit_code == code, result
    assert result.stdout == "" and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("thatch: error: ")
    return line


def json_error(result, code: int) -> dict:
    assert result.exit_code == code, result
    assert result.stdout.count("\n") == 1 and result.stderr == ""  # one compact object
    return json.loads(result.stdout)["error"]


@pytest.fixture
def repo(git_repo):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


@pytest.fixture
def seeded(cli, repo):
    cli("remember", "Release process", "tag, build the wheel, twine upload", cwd=repo)
    cli("remember", "Python style", "black, line length 100", "--global", cwd=repo)
    cli("remember", "Staging port", "5433", "--store", "staging-db", cwd=repo)
    cli("remember", "Deploy notes", "make deploy", "--store", "acme/deploy", cwd=repo)
    return repo


# -- unknown stores ----------------------------------------------------------------------------


def test_unknown_store_is_not_found_with_did_you_mean(cli, seeded):
    line = one_error(cli("list", "deploy", cwd=seeded), 3)
    assert line == ("thatch: error: no store named 'deploy'; did you mean 'acme/deploy'?"
                    " ('thatch stores' lists them)")
    line = one_error(cli("recall", "port", "--store", "staging db", cwd=seeded), 3)
    assert "did you mean 'staging-db'?" in line
    error = json_error(cli("recall", "port", "--store", "staging db", "--json", cwd=seeded), 3)
    assert error["code"] == "not_found" and error["suggestions"] == ["staging-db"]
    for argv in (["show", "Release process", "--store", "nope"], ["forget", "x", "nope"],
                 ["hygiene", "--store", "nope"], ["duplicates", "--store", "nope"], ["export", "--store", "nope"],
                 ["archive", "--branch", "b", "--store", "nope"], ["reindex", "--store", "nope"],
                 ["search", "port", "nope"], ["dedup", "list", "--store", "nope"]):
        assert "no store named 'nope'" in one_error(cli(*argv, cwd=seeded), 3), argv
    # The detected store may be empty (a repository without memories yet), and global always exists.
    fresh = cli("list", "--json", cwd=seeded.parent)
    assert fresh.exit_code == 0 and json.loads(fresh.stdout)["memories"] == []
    assert cli("list", "global", cwd=seeded).exit_code == 0


def test_remember_says_it_creates_a_store(cli, seeded):
    result = cli("remember", "First", "one", "--store", "team/notes", cwd=seeded)
    assert result.exit_code == 0
    assert result.stderr == "thatch: created store team/notes (it did not exist; 'thatch stores' lists stores)\n"
    again = cli("remember", "Second", "two", "--store", "team/notes", "--json", cwd=seeded)
    assert json.loads(again.stdout)["store_created"] is False and again.stderr == ""


# -- labels --------------------------------------------------------------------------------------


def test_a_missing_label_suggests_close_ones_and_other_stores(cli, seeded):
    assert one_error(cli("show", "relase", cwd=seeded), 3) == (
        "thatch: error: no memory labelled 'relase' in acme/widget or global; did you mean 'Release process'?")
    line = one_error(cli("show", "Deploy notes", cwd=seeded), 3)
    assert line.endswith("acme/deploy has one: add --store acme/deploy")
    error = json_error(cli("show", "Deploy notes", "--json", cwd=seeded), 3)
    assert error["elsewhere"] == ["acme/deploy"] and error["stores"] == ["acme/widget", "global"]


def test_forget_never_crosses_into_global(cli, seeded, isolated_env):
    line = one_error(cli("forget", "Python style", cwd=seeded), 3)
    assert line == ("thatch: error: no memory labelled 'Python style' in acme/widget; global has one:"
                    " add --store global (global is shared by every repository)")
    db = MemoryDB.open(__import__("pathlib").Path(isolated_env["THATCH_DB"]))
    assert db.get("global", "python-style") is not None  # still there
    assert cli("forget", "Python style", "--store", "global", cwd=seeded).exit_code == 0
    cli("remember", "Python style", "black", "--global", cwd=seeded)
    assert cli("forget", "Python style", "global", cwd=seeded).exit_code == 0  # the original's positional form
    cli("remember", "Python style", "black", "--global", cwd=seeded)
    assert cli("forget", "Python style", "--global", cwd=seeded).stdout == "Forgot 'Python style' from global\n"
    assert db.get("global", "python-style") is None


def test_show_falls_back_to_global_and_says_so(cli, seeded):
    result = cli("show", "Python style", cwd=seeded)
    assert result.exit_code == 0 and "black, line length 100" in result.stdout
    assert result.stderr == "thatch: not in acme/widget; showing 'Python style' from global\n"
    data = json.loads(cli("show", "Python style", "--json", cwd=seeded).stdout)
    assert data["memory"]["store"] == "global" and data["notices"] == [
        "not in acme/widget; showing 'Python style' from global"]
    assert cli("show", "Python style", "global", cwd=seeded).stderr == ""  # asked for: nothing to say
    assert cli("show", "Release process", cwd=seeded).stderr == ""


def test_remember_the_same_memory_again_is_unchanged(cli, seeded, isolated_env):
    args = ("remember", "Deploy", "make deploy", "--confidence", "7", "--branch", "main")
    first = json.loads(cli(*args, "--json", cwd=seeded).stdout)
    again = cli(*args, cwd=seeded)
    assert again.exit_code == 0 and again.stdout == "Unchanged: 'Deploy' is already in acme/widget @ main with this content\n"
    data = json.loads(cli(*args, "--json", cwd=seeded).stdout)
    assert data["status"] == "unchanged" and data["memory"]["updated_at"] == first["memory"]["updated_at"]
    assert data["has_vector"] is True
    # Options not given are kept, so a bare retry is unchanged too.
    assert json.loads(cli("remember", "Deploy", "make deploy", "--json", cwd=seeded).stdout)["status"] == "unchanged"
    # Anything different is still a conflict.
    assert cli("remember", "Deploy", "make deploy now", cwd=seeded).exit_code == 4
    assert cli(*args[:-4], "--confidence", "3", cwd=seeded).exit_code == 4
    assert cli("remember", "deploy", "make deploy", cwd=seeded).exit_code == 4  # same slug, other label


def test_archive_of_a_branch_without_memories_is_an_error(cli, seeded):
    cli("remember", "Spike", "result", "--branch", "spike", cwd=seeded)
    line = one_error(cli("archive", "--branch", "nope", cwd=seeded), 3)
    assert line == ("thatch: error: no live memories scoped to branch nope in acme/widget; nothing archived"
                    " (branches with live memories: spike)")
    assert json_error(cli("archive", "--branch", "nope", "--json", cwd=seeded), 3)["branches_left"] == ["spike"]


# -- commands --------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv, meant", [
    (["rm", "x"], "thatch forget"),
    (["find", "x"], "thatch recall"),
    (["delete"], "thatch forget"),
    (["ls"], "thatch list"),
    (["serach", "x"], "thatch search"),
    (["remmber", "x"], "thatch remember"),
    (["dedup", "mrk", "a", "b"], "thatch dedup mark"),
    (["hooks", "instal"], "thatch hooks install"),
])
def test_mistyped_commands_suggest_the_right_one(cli, argv, meant):
    line = one_error(cli(*argv), 2)
    typo = argv[1] if argv[0] in ("dedup", "hooks") else argv[0]
    assert line.startswith(f"thatch: error: unknown command {typo!r}; did you mean '{meant}'")
    error = json_error(cli(*argv, "--json"), 2)
    assert error["code"] == "usage" and meant in error["message"]


def test_help_command(cli):
    top = cli("help")
    assert top.exit_code == 0 and "remember" in top.stdout and "Examples:" in top.stdout
    recall = cli("help", "recall")
    assert recall.exit_code == 0 and "Usage: thatch recall [OPTIONS] [QUERY...]" in recall.stdout
    assert cli("help", "dedup", "mark").stdout == cli("dedup", "mark", "--help").stdout
    assert "did you mean 'thatch recall'?" in one_error(cli("help", "recal"), 2)


@pytest.mark.parametrize("argv", [
    ["dedup", "mark", "a"],  # a missing argument inside a group
    ["hooks", "install", "--bogus"],
    ["completion", "show", "tcsh"],
    ["recall"],
    ["remember", "a", "b", "--confidence", "x"],
    ["list", "a", "b"],
    ["daemon", "status", "extra"],
    ["--bogus"],
])
def test_every_usage_error_is_one_line(cli, argv):
    one_error(cli(*argv), 2)
    error = json_error(cli(*argv, "--json"), 2)
    assert set(error) >= {"code", "message", "exit_code"} and error["exit_code"] == 2


def test_errors_in_a_real_process_are_one_line(tmp_path):
    for argv in (["rm", "x"], ["list", "nope"], ["dedup", "keep", "a"]):
        result = thatch_process(argv, cwd=tmp_path)
        assert result.returncode in (2, 3) and result.stdout == ""
        assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("thatch: error: ")


# -- the original's habits, and consistent flags ----------------------------------------------------


def test_search_with_store_or_all_searches_the_originals_stores(cli, seeded):
    """As the original's `thatch search`: the project store alone, STORE
    alone, or with `all` the project store and global."""
    default = json.loads(cli("search", "port", "--json", cwd=seeded).stdout)
    assert default["stores"] == ["acme/widget"]
    only = json.loads(cli("search", "port", "staging-db", "--json", cwd=seeded).stdout)
    assert only["stores"] == ["staging-db"] and [r["slug"] for r in only["results"]] == ["staging-port"]
    both = json.loads(cli("search", "port", "all", "--json", cwd=seeded).stdout)
    assert both["stores"] == ["acme/widget", "global"]
    assert json.loads(cli("recall", "port", "--json", cwd=seeded).stdout)["stores"] == both["stores"]


def test_global_is_short_for_store_global(cli, seeded):
    assert json.loads(cli("list", "--global", "--json", cwd=seeded).stdout)["store"] == "global"
    assert json.loads(cli("recall", "style", "-g", "--json", cwd=seeded).stdout)["stores"] == ["global"]
    assert json.loads(cli("show", "Python style", "--global", "--json", cwd=seeded).stdout)["notices"] == []
    assert "either --store or --global" in one_error(cli("list", "--global", "--store", "x", cwd=seeded), 2)


def test_this_branch_wherever_branch_is(cli, seeded):
    git(seeded, "switch", "-qc", "feat/login")
    cli("remember", "Login flow", "oauth first", "--this-branch", cwd=seeded)
    listed = json.loads(cli("list", "--this-branch", "--json", cwd=seeded).stdout)["memories"]
    assert [m["slug"] for m in listed] == ["login-flow"]
    assert json.loads(cli("recall", "oauth", "--this-branch", "--json", cwd=seeded).stdout)["branch"] == "feat/login"
    assert cli("archive", "--this-branch", cwd=seeded).stdout.startswith("Archived 1 memory of branch feat/login")
    assert "either --branch or --this-branch" in one_error(cli("list", "-b", "x", "--this-branch", cwd=seeded), 2)


def test_export_all_stores(cli, seeded):
    lines = cli("export", "--all-stores", cwd=seeded).stdout.splitlines()
    assert {json.loads(line)["store"] for line in lines} == {"acme/widget", "acme/deploy", "global", "staging-db"}
    assert cli("export", "-a", cwd=seeded).stdout.splitlines() == lines
    assert cli("export", "--all", cwd=seeded).stdout.splitlines() == lines  # the earlier spelling still works


@pytest.mark.parametrize("shell, marker", [("zsh", "#compdef thatch"), ("fish", "complete -c thatch")])
def test_completion_show_detects_the_shell(shell, marker, tmp_path):
    """Run from a real shell, like `completion install`: no argument needed."""
    import shlex
    import shutil
    import sys

    if not shutil.which(shell):
        pytest.skip(f"{shell} not installed")
    command = f"{shlex.quote(sys.executable)} -m thatch_cli completion show --json; true"  # `; true`: no exec
    result = subprocess.run([shell, "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "SHELL": "/bin/sh"})
    data = json.loads(result.stdout)
    assert data["shell"] == shell and marker in data["script"]
