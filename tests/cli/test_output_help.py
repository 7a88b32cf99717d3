"""Output and help: piped output is the table's columns tab-separated,
NO_COLOR only takes colour away (a pty shows what a person sees), and every
command's help and man page section has examples, real argument names, no
`<bool>`, its choices and its JSON keys."""

import os
import re
import subprocess
import sys

import pytest

from thatch_cli.gen import cli_model, man

from helpers import thatch_pty

COLOUR = re.compile(r"\x1b\[(3[0-9]|9[0-7]|4[0-9]|38;|48;)")


@pytest.fixture
def world(tmp_path, isolated_env):
    env = {**os.environ, "THATCH_MODEL": "fake:64", "THATCH_STORE": "acme/widget"}
    for args in (["Release process", "Tag, build the wheel, twine upload."],
                 ["Login flow", "OAuth first, then the session cookie.", "--branch", "feat/login", "-c", "8"]):
        subprocess.run([sys.executable, "-m", "thatch_cli", "remember", *args], env=env, cwd=tmp_path, check=True,
                       capture_output=True)
    return env, tmp_path


def piped(env, cwd, *args) -> list[list[str]]:
    result = subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=env, cwd=cwd, capture_output=True,
                            text=True, check=True)
    return [line.split("\t") for line in result.stdout.splitlines()]


def test_piped_output_keeps_the_table_columns(world):
    env, cwd = world
    rows = piped(env, cwd, "list")  # label, branch, conf, updated, snippet: the table's columns
    assert [row[:3] + row[4:] for row in rows] == [
        ["Login flow", "feat/login", "8", "OAuth first, then the session cookie."],
        ["Release process", "", "", "Tag, build the wheel, twine upload."]]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", row[3]) for row in rows)
    recalled = piped(env, cwd, "recall", "twine upload")  # score, store, label, branch, snippet
    assert [row[1:] for row in recalled] == [
        ["acme/widget", "Release process", "", "Tag, build the wheel, twine upload."]]
    assert 0 < float(recalled[0][0]) <= 1
    assert [row[:2] for row in piped(env, cwd, "stores")] == [["acme/widget", "2"], ["global", "0"]]
    # An empty answer prints nothing on stdout; the reason goes to stderr.
    nothing = subprocess.run([sys.executable, "-m", "thatch_cli", "list", "--archived"], env=env, cwd=cwd,
                             capture_output=True, text=True)
    assert nothing.stdout == "" and nothing.stderr == "thatch: no archived memories in acme/widget\n"


def test_no_color_keeps_the_table_on_a_terminal(world):
    env, cwd = world
    env = {**env, "TERM": "xterm-256color", "COLUMNS": "100"}
    code, table = thatch_pty(["list"], env={**env, "NO_COLOR": "1"}, cwd=cwd)
    assert code == 0 and not COLOUR.search(table)
    header = re.sub(r"\x1b\[[0-9;]*m", "", table).splitlines()[1].split()
    assert header == ["label", "branch", "conf", "updated", "snippet"]
    assert "\t" not in table  # a table, not the piped form
    code, dumb = thatch_pty(["list"], env={**env, "TERM": "dumb"}, cwd=cwd)
    assert code == 0 and dumb.splitlines()[0].split("\t")[:3] == ["Login flow", "feat/login", "8"]


# -- help -------------------------------------------------------------------------------------------


COMMANDS = sorted(path for path, spec in cli_model.commands().items()
                  if not spec["hidden"] and not path.startswith("_"))


@pytest.mark.parametrize("path", COMMANDS)
def test_every_help_has_examples_names_and_json_keys(cli, path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich reads the width from the process environment
    spec = cli_model.commands()[path]
    result = cli(*path.split(), "--help")
    text = result.stdout
    assert result.exit_code == 0
    assert "Examples:" in text and f"thatch {path}" in text.split("Examples:", 1)[1]
    takes_json = any(p["name"] == "as_json" for p in spec["params"])
    assert ("JSON (--json):" in text) == takes_json
    assert "see README" not in text
    assert not re.search(r"<(bool|str|int|float)>", text), text
    usage = re.search(r"Usage: (.*)", text).group(1).strip()
    for param in spec["params"]:
        if param["kind"] == "argument":
            name = param["metavar"] or param["name"].upper()
            assert name in usage and "{" not in usage, usage
        if param["choices"] and param["kind"] == "option":
            assert "[" + "|".join(param["choices"]) + "]" in text
        elif param["choices"]:
            assert all(choice in text for choice in param["choices"])


def test_usage_lines_read_like_git(cli):
    def usage(*args):
        return re.search(r"Usage: (.*)", cli(*args, "--help").stdout).group(1).strip()

    assert usage("remember") == "thatch remember [OPTIONS] [LABEL] [CONTENT]"
    assert usage("show") == "thatch show [OPTIONS] LABEL [STORE]"
    assert usage("search") == "thatch search [OPTIONS] QUERY [STORE]"
    assert usage("rename") == "thatch rename [OPTIONS] OLD NEW"
    assert usage("dedup", "mark") == "thatch dedup mark [OPTIONS] LABEL_A LABEL_B"


def test_top_level_help_states_the_error_rule_once(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    text = cli("--help").stdout
    assert 'thatch: error: MESSAGE' in text and '{"error": {"code", "message", "exit_code", ...}}' in text


def test_man_page_has_examples_and_json_keys_per_command():
    page = man.render()
    sections = page.split('.SS "')[1:]
    commands = [s for s in sections if "Examples:" in s]
    assert len(commands) == len(COMMANDS)
    assert sum("JSON (\\-\\-json):" in s or "JSON (--json):" in s for s in commands) == sum(
        any(p["name"] == "as_json" for p in cli_model.commands()[c]["params"]) for c in COMMANDS)
    assert ".SH JSON OUTPUT" in page and "see README" not in page


def test_spec_records_examples_for_every_command():
    from thatch_cli.cli.spec import SPEC as data

    missing = [path for path, spec in data["commands"].items()
               if not path.startswith("_") and not spec["hidden"] and not spec["examples"]]
    assert missing == []


def test_piped_snippets_end_on_a_word_at_one_width(tmp_path, isolated_env):
    """`list` and `recall` piped: the same snippet, cut after a whole word with "…"."""
    env = {**os.environ, "THATCH_MODEL": "fake:64", "THATCH_STORE": "acme/widget"}
    body = ("Rotate the staging credentials every quarter: regenerate the deployment tokens, "
            "update the vault entries, restart the workers and confirm the dashboards recover.")
    subprocess.run([sys.executable, "-m", "thatch_cli", "remember", "Credential rotation", body], env=env,
                   cwd=tmp_path, check=True, capture_output=True)
    listed = piped(env, tmp_path, "list")[0][-1]
    recalled = piped(env, tmp_path, "recall", "credential rotation")[0][-1]
    assert listed == recalled
    assert listed.endswith("…") and len(listed) <= 100
    kept = listed[:-1]
    assert body.startswith(kept) and body[len(kept)] == " "  # the next character is a space: a whole word
