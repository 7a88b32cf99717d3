"""The settings registry (support/settings.py): one place every reader goes through,
environment over file over default, strict for commands and lenient for
the hot paths."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from thatch_cli.daemon import runtime
from thatch_cli.model import embeddings
from thatch_cli.support import settings
from thatch_cli.support.settings import SETTINGS, SettingsError

ROOT = Path(__file__).resolve().parents[2]


def write(env, text: str) -> Path:
    path = settings.path(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_environment_over_file_over_default(isolated_env):
    env = dict(isolated_env)
    assert settings.resolve(env, "recall.limit") == (10, "default")
    write(env, "[recall]\nlimit = 4\n")
    assert settings.resolve(env, "recall.limit") == (4, "file")
    assert settings.resolve({**env, "THATCH_RECALL_LIMIT": "7"}, "recall.limit") == (7, "env")
    assert settings.resolve({**env, "THATCH_RECALL_LIMIT": " "}, "recall.limit") == (4, "file")  # blank = unset


def test_every_reader_of_the_model_agrees(isolated_env, minilm_folder):
    """embeddings.model_name, the daemon's expected model and the embedder
    all take the model from the same setting."""
    env = {k: v for k, v in isolated_env.items() if k != "THATCH_DAEMON"}
    write(env, f'model = "{minilm_folder}"\n')
    assert embeddings.model_name(env) == minilm_folder
    assert runtime.expected_model(env) == embeddings.model_identity(minilm_folder, env)
    assert embeddings.embedder_from_env(env).name == runtime.expected_model(env)
    assert runtime.expected_model({**env, "THATCH_MODEL": "fake:8"}) == embeddings.model_name(
        {**env, "THATCH_MODEL": "fake:8"}) == "fake:8"


def test_daemon_settings_from_the_file(isolated_env):
    env = {k: v for k, v in isolated_env.items() if k != "THATCH_DAEMON"}
    assert not runtime.disabled(env) and runtime.idle_seconds(env) == 600
    write(env, "[daemon]\nenabled = false\nidle = 30\n")
    assert runtime.disabled(env) and runtime.idle_seconds(env) == 30
    assert not runtime.disabled({**env, "THATCH_DAEMON": "on"})
    assert settings.origin(env, "daemon.enabled") == f"daemon.enabled in {settings.path(env)}"
    assert settings.origin({**env, "THATCH_DAEMON": "0"}, "daemon.enabled") == "THATCH_DAEMON=0"


@pytest.mark.parametrize("text, fragment", [
    ("[recall\nfloor = 0.2\n", "is not valid TOML"),
    ("[recall]\nfloor = 3\n", "recall.floor in"),
    ("[recall]\nfloor = 'high'\n", "recall.floor in"),
    ("[recall]\nlimit = 2.5\n", "recall.limit in"),
])
def test_a_broken_file_is_an_error_for_commands_and_the_default_for_hot_paths(isolated_env, text, fragment):
    env = dict(isolated_env)
    write(env, text)
    key = "recall.limit" if "limit" in text else "recall.floor"
    with pytest.raises(SettingsError, match=re.escape(fragment)):
        settings.value(env, key)
    assert settings.value(env, key, strict=False) == SETTINGS[key].default


def test_a_bad_variable_names_itself(isolated_env):
    with pytest.raises(SettingsError, match=r"THATCH_DAEMON='maybe' is not a valid daemon.enabled"):
        settings.value({**isolated_env, "THATCH_DAEMON": "maybe"}, "daemon.enabled")
    assert runtime.disabled({**isolated_env, "THATCH_DAEMON": "maybe"}) is False  # lenient: the default


@pytest.mark.parametrize("key, raw, expected", [
    ("daemon.enabled", "OFF", False), ("daemon.enabled", "yes", True), ("daemon.idle", "90", 90.0),
    ("recall.floor", "0", 0.0), ("recall.floor", "1", 1.0), ("recall.limit", "25", 25),
    ("duplicates.threshold", "0.9", 0.9), ("model", " fake:64 ", "fake:64"),
])
def test_values_are_parsed_from_text(key, raw, expected):
    assert SETTINGS[key].parse(raw) == expected


@pytest.mark.parametrize("key, raw", [
    ("daemon.enabled", "maybe"), ("daemon.idle", "0"), ("daemon.idle", "nan"), ("recall.floor", "1.5"),
    ("recall.floor", "-0.1"), ("recall.limit", "0"), ("recall.limit", "3.5"), ("duplicates.threshold", "0"),
    ("model", ""), ("model", "a\nb"), ("recall.limit", True),
])
def test_bad_values_are_refused(key, raw):
    with pytest.raises(ValueError):
        SETTINGS[key].parse(raw)


def test_the_file_is_read_once_per_change(isolated_env):
    env = dict(isolated_env)
    path = write(env, "[recall]\nlimit = 4\n")
    assert settings.value(env, "recall.limit") == 4
    cached = settings._READ[str(path)]
    assert settings.value(env, "recall.floor") == 0.35 and settings._READ[str(path)] is cached
    path.write_text("[recall]\nlimit = 5\n")
    assert settings.value(env, "recall.limit") == 5


def test_docs_list_every_setting():
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    for entry in SETTINGS.values():
        default = f"`{entry.show(entry.default)}`" if entry.show(entry.default) else "(none)"
        row = f"| `{entry.key}` | `{entry.env}` | {default} |"
        assert row in text, row


def test_reading_settings_stays_light(isolated_env):
    """The registry imports only the standard library (the shell hook's
    warm-up reads it); tomlkit is for writing only."""
    env = dict(isolated_env)
    write(env, "[daemon]\nwarm = false\n")
    code = ("import sys; from thatch_cli.support import settings; import os;"
            "print(settings.value(dict(os.environ), 'daemon.warm'));"
            "print(sorted(m for m in ('tomlkit', 'numpy', 'typer', 'rich') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    assert result.stdout.split("\n")[:2] == ["False", "[]"], result.stderr


def test_agent_settings_come_from_the_file_too(isolated_env):
    """The recall nudge's cut-off and the MCP result cap are settings like any
    other: the file sets them, the variable overrides, a bad value in a hook
    means the default."""
    from thatch_cli.ops.nudge import threshold

    env = dict(isolated_env)
    write(env, "[nudge]\nthreshold = 0.7\n[mcp]\nmax_chars = 5000\n")
    assert threshold(env) == 0.7 and settings.value(env, "mcp.max_chars") == 5000
    assert threshold({**env, "THATCH_RECALL_THRESHOLD": "0.6"}) == 0.6
    assert threshold({**env, "THATCH_RECALL_THRESHOLD": "7"}) == 0.45


def test_unknown_keys_are_warned_about_once_with_the_setting_meant(cli, isolated_env):
    """A typo'd key used to be ignored without a word."""
    path = write(isolated_env, "[recall]\nflor = 0.1\n\n[recall.sub]\n\n[bogus]\nkey = 1\n")
    saved = cli("remember", "a", "alpha beta", THATCH_STORE="s")
    assert saved.exit_code == 0
    warned = [line for line in saved.stderr.splitlines() if line.startswith("thatch: warning:")]
    assert warned == [
        (f"thatch: warning: {path} sets 'bogus.key', which is not a thatch setting: it is ignored; 'thatch config"
         " list' shows the settings there are"),
        (f"thatch: warning: {path} sets 'recall.flor', which is not a thatch setting: it is ignored (did you mean"
         " recall.floor?)"),
        (f"thatch: warning: {path} sets 'recall.sub', which is not a thatch setting: it is ignored (did you mean"
         " recall.limit?)"),
    ]
    result = cli("recall", "alpha", THATCH_STORE="s")  # the same process: said once
    assert result.exit_code == 0 and result.stdout.startswith("0.") and "warning" not in result.stderr
    fresh = subprocess.run([sys.executable, "-m", "thatch_cli", "config", "list"], env={**os.environ},
                           capture_output=True, text=True, timeout=60)
    assert fresh.returncode == 0
    assert fresh.stderr.count("which is not a thatch setting") == 3 and "did you mean recall.floor?" in fresh.stderr
    assert settings.unknown(isolated_env) == ["bogus.key", "recall.flor", "recall.sub"]


def test_a_byte_order_mark_is_accepted_and_kept(cli, isolated_env):
    path = settings.path(isolated_env)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf[recall]\nlimit = 3\n")
    assert settings.resolve(isolated_env, "recall.limit") == (3, "file")
    assert cli("config", "set", "recall.floor", "0.2").exit_code == 0
    assert path.read_bytes().startswith(b"\xef\xbb\xbf[recall]\nlimit = 3\n")
    assert settings.resolve(isolated_env, "recall.floor") == (0.2, "file")


def test_a_huge_settings_file_is_refused_without_being_read(isolated_env):
    path = write(isolated_env, "# padding\n" * 10)
    with open(path, "ab") as fh:
        fh.truncate(49 * 1024 * 1024)  # 49 MB, mostly a hole: cheap to make, slow to parse
    env = {**os.environ}
    result = subprocess.run([sys.executable, "-m", "thatch_cli", "recall", "x"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == (f"thatch: error: the settings file {path} is 51,380,224 bytes; thatch reads settings"
                             " files of at most 64 KiB (fix or remove it)\n")
    assert settings.value(env, "recall.limit", strict=False) == 10  # hooks: the default, silently
