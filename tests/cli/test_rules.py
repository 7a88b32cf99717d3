"""`thatch rules list | show | forget` as a person runs it (a real process,
a real SQLite file): every learned rule in the open, one with its whole
history, forgetting one; --json keys; did-you-mean; stored text escaped."""

from __future__ import annotations

import json
import os

import pytest

from thatch_cli.ops.context import Context
from thatch_cli.ops.rules import feedback, record
from thatch_cli.storage.rules import BEHAVIORS, PREDICTIONS

from helpers import thatch_process


@pytest.fixture
def project(git_repo):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


@pytest.fixture
def env(isolated_env):
    return {**os.environ, "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0"}


def seed(env, project) -> tuple[dict, dict]:
    with Context(env=env, cwd=project) as ctx:
        prediction = record(ctx, PREDICTIONS, "choosing a test runner", "use pytest with \x1b[31mxdist", "confirm",
                            "the user said so")
        behavior = record(ctx, BEHAVIORS, "editing a large function", "read the whole function first", "create",
                          "a partial read broke it", "global")
        feedback(ctx, "read the whole function first", False, "a one-line getter", "global")
    return prediction, behavior


def run(env, project, *args):
    return thatch_process(["rules", *args], env=env, cwd=project)


def test_list_show_and_forget(project, env):
    assert run(env, project, "list").stderr.strip() == "thatch: no learned rules"
    prediction, behavior = seed(env, project)
    listed = json.loads(run(env, project, "list", "--json").stdout)["rules"]
    assert [(r["kind"], r["store"], r["confidence"], r["evidence_count"]) for r in listed] == [
        ("prediction", "acme/widget", 0.583, 1), ("behavior", "global", 0.417, 1)]
    assert listed[0]["matchers"][0]["description"] == "choosing a test runner"
    piped = run(env, project, "list").stdout.splitlines()
    assert piped[0].split("\t")[:3] == ["prediction", prediction["id"], "acme/widget"]
    assert "\x1b" not in run(env, project, "list").stdout and "\\x1b[31m" in piped[0]
    assert [r["kind"] for r in json.loads(run(env, project, "list", "--kind", "behavior", "--json").stdout)["rules"]] \
        == ["behavior"]
    shown = json.loads(run(env, project, "show", behavior["id"][:6], "--json").stdout)["rule"]
    assert [p["signal"] for p in shown["provenance"]] == ["disconfirm", "codify"]
    assert shown["provenance"][0]["detail"] == "spam: a one-line getter"
    text = run(env, project, "show", behavior["id"]).stdout
    assert "read the whole function first" in text and "spam: a one-line getter" in text
    missing = run(env, project, "show", prediction["id"][:7] + "x", "--json")
    assert missing.returncode != 0 and json.loads(missing.stdout)["error"]["code"] == "not_found"
    assert "did you mean" in json.loads(missing.stdout)["error"]["message"]
    gone = json.loads(run(env, project, "forget", prediction["id"][:8], "--json").stdout)["forgotten"]
    assert gone["id"] == prediction["id"]
    assert [r["kind"] for r in json.loads(run(env, project, "list", "--json").stdout)["rules"]] == ["behavior"]
    bad = run(env, project, "list", "--store", "acme/widgte")
    assert bad.returncode != 0 and "did you mean 'acme/widget'" in bad.stderr


def test_status_counts_rules_and_a_backup_restores_them(project, env, tmp_path):
    prediction, behavior = seed(env, project)
    status = json.loads(thatch_process(["status", "--json"], env=env, cwd=project).stdout)
    assert status["database"]["rules"] == {"predictions": 1, "behaviors": 1}
    backup = tmp_path / "copy.db"
    assert thatch_process(["backup", str(backup), "--json"], env=env, cwd=project).returncode == 0
    run(env, project, "forget", prediction["id"])
    restored = thatch_process(["restore", str(backup), "--json"], env=env, cwd=project)
    assert restored.returncode == 0, restored.stderr
    shown = json.loads(run(env, project, "show", prediction["id"], "--json").stdout)["rule"]
    assert shown["confidence"] == prediction["confidence"] and shown["provenance"][0]["signal"] == "confirm"
