"""`thatch status`: database, model and identity, cut-offs, daemon, hooks here, agent setups and backups,
read without creating or starting anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from thatch_cli.storage.schema import SCHEMA_VERSION

from helpers import daemon_pids, stop_all, thatch_pty

KEYS = {"database", "model", "calibration", "daemon", "here", "agents", "backups", "settings"}


def thatch(env, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def env(isolated_env):
    env = {**os.environ, "THATCH_MODEL": "fake:32"}
    env.pop("THATCH_SHELL_HOOK", None)
    yield env
    stop_all(env)


def test_status_creates_nothing_and_starts_nothing(env, tmp_path, isolated_env):
    result = thatch({**env, "THATCH_DAEMON": "1"}, "status", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == KEYS
    assert data["database"] == {"path": isolated_env["THATCH_DB"], "exists": False, "bytes": 0, "schema": None,
                                "memories": None, "stores": None, "rules": None}
    assert not Path(isolated_env["THATCH_DB"]).exists()
    assert data["daemon"]["running"] is False and not daemon_pids(env)
    assert data["here"]["repository"] is None and data["here"]["git_hooks"] is None
    assert data["model"] == {"name": "fake:32", "source": "env", "from": "THATCH_MODEL=fake:32",
                             "identity": "fake:32", "kind": "fake"}
    assert data["calibration"]["source"] == "settings"
    assert data["calibration"]["calibrated"] is True  # the test embedder is its own scale
    assert data["calibration"]["cutoffs"]["recall.floor"] == {"value": 0.35, "source": "default",
                                                              "from": "the default", "cosine": 0.35}


def test_status_reports_everything_in_use(env, git_repo, isolated_env):
    repo = git_repo("widget", remote="git@github.com:acme/widget.git")
    for n in range(3):
        assert thatch(env, "remember", f"Note {n}", f"text {n}", cwd=repo).returncode == 0
    thatch({**env, "THATCH_MODEL": "fake:16"}, "remember", "Other model", "text", cwd=repo)
    assert thatch(env, "hooks", "install", cwd=repo).returncode == 0
    daemon_env = {**env, "THATCH_DAEMON": "1", "THATCH_RECALL_FLOOR": "0.4"}
    # the same settings as status sees: setup records them for the MCP server
    assert thatch(daemon_env, "setup", "claude", cwd=repo).returncode == 0
    assert thatch(env, "backup", cwd=repo).returncode == 0
    assert thatch(daemon_env, "daemon", "start", cwd=repo).returncode == 0
    result = thatch({**daemon_env, "THATCH_SHELL_HOOK": "zsh"}, "status", "--json", cwd=repo)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["database"]["exists"] and data["database"]["schema"] == SCHEMA_VERSION
    assert (data["database"]["memories"], data["database"]["stores"]) == (4, 2)  # acme/widget and global
    assert data["model"]["vectors"] == {"this_model": 3, "other_models": 1, "none": 0}
    assert data["calibration"]["cutoffs"]["recall.floor"] == {"value": 0.4, "source": "env",
                                                              "from": "THATCH_RECALL_FLOOR=0.4", "cosine": 0.4}
    daemon = data["daemon"]
    assert daemon["running"] and daemon["pid"] in daemon_pids(env) and daemon["model"] == "fake:32"
    assert daemon["rss_bytes"] > 1_000_000
    here = data["here"]
    assert (here["store"], here["store_from"], here["branch"]) == ("acme/widget", "detected", "main")
    assert here["repository"] == os.path.realpath(repo) and here["shell_hook"] == "zsh"
    assert here["git_hooks"]["hooks"] == {"post-checkout": "installed", "reference-transaction": "installed"}
    assert {"host": "claude", "scope": "project", "state": "wired"} in data["agents"]
    assert data["backups"]["count"] == 1 and data["backups"]["kinds"] == {"backup": 1}
    assert data["backups"]["bytes"] > 0 and data["backups"]["keep"] == 10


@pytest.mark.parametrize("cols", [80, 160])
def test_status_on_a_terminal_fits_the_window(env, git_repo, cols):
    repo = git_repo("widget", remote="git@github.com:acme/widget.git")
    thatch(env, "remember", "Note", "text", cwd=repo)
    code, text = thatch_pty(["status"], env={**env, "NO_COLOR": "1"}, cwd=repo, cols=cols)
    assert code == 0, text
    lines = text.rstrip("\n").split("\n")
    labels = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert labels == ["database", "model", "vectors", "cut-offs", "daemon", "here", "git", "shell", "agents",
                      "backups", "settings"]
    assert [line for line in lines if line != line.rstrip()] == []
    # Facts wrap between items; only an item wider than the window by itself (a long path,
    # kept whole to copy) may run over, alone on its line.
    assert [line for line in lines if len(line) > cols and " · " in line] == []


def test_status_labels_binary_sizes_and_a_young_uptime(env, git_repo):
    """Sizes are powers of two, so they say MiB/KiB; a daemon seconds old is "up N s", not "up 0 min"."""
    import re

    repo = git_repo("widget", remote="git@github.com:acme/widget.git")
    daemon_env = {**env, "THATCH_DAEMON": "1"}
    assert thatch(daemon_env, "remember", "Note", "text", cwd=repo).returncode == 0
    assert thatch(daemon_env, "daemon", "start", cwd=repo).returncode == 0
    shown = thatch(daemon_env, "status", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    lines = {line.split()[0]: line for line in shown.stdout.splitlines() if line and not line.startswith(" ")}
    assert re.search(r"\d KiB", lines["database"]), lines["database"]
    assert re.search(r"\d MiB", lines["daemon"]) and re.search(r"up \d+ s\b", lines["daemon"]), lines["daemon"]
    assert " MB" not in shown.stdout and "up 0 min" not in shown.stdout
    daemon = thatch(daemon_env, "daemon", "status", cwd=repo)
    assert re.search(r"memory +\d+ MiB resident", daemon.stdout), daemon.stdout
