"""Learned rules fire in the prompt hook as each host calls it (`flush-tools
--host claude|codex|cursor`, and the original's `flush-predictions`):
through the warm daemon, on the calibrated scale, framed as data, stored
text escaped; nothing for an unrelated prompt or a cold daemon."""

from __future__ import annotations

import json
import os

import pytest

from thatch_cli.ops.context import Context
from thatch_cli.ops.rules import record
from thatch_cli.storage.rules import BEHAVIORS, PREDICTIONS

from helpers import hook, hook_payload, run_probed, stop_all, thatch_process, top_level

SITUATION = "reviewing a pull request that carries tech debt"
PREDICTION = "flag the tech debt before reviewing the diff itself"
MATCHING = "we are reviewing a pull request that carries tech debt in it"
UNRELATED = "write a haiku about autumn leaves and rain"
HOSTS = [("claude", "claude_user_prompt_submit"), ("codex", "codex_user_prompt_submit"),
         ("cursor", "cursor_before_submit_prompt")]


@pytest.fixture
def project(git_repo):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


@pytest.fixture
def env(isolated_env):
    env = {**os.environ, "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "1"}
    env.pop("THATCH_DAEMON_IDLE", None)
    yield env
    stop_all(env)


def seed(env, project) -> None:
    with Context(env={**env, "THATCH_DAEMON": "0"}, cwd=project) as ctx:
        record(ctx, PREDICTIONS, SITUATION, PREDICTION, "confirm", "the user said so")
        record(ctx, BEHAVIORS, "reviewing a pull request with tech debt in it",
               "read the \u202eolder\u202c review threads \x1b[31m first", "create", "missed context once", "global")


def context_of(result, host: str) -> str:
    assert result.returncode == 0 and "Traceback" not in result.stderr, result
    if host == "cursor":
        return json.loads(result.stdout).get("additional_context", "")
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def test_a_matching_prompt_fires_both_blocks_for_every_host(project, env):
    seed(env, project)
    assert thatch_process(["daemon", "start"], env=env, cwd=project).returncode == 0
    for host, payload in HOSTS:
        result = hook(["flush-tools", "--host", host], hook_payload(payload, project=project, prompt=MATCHING),
                      env=env)
        text = context_of(result, host)
        assert "thatch: User decision model: 1 learned rule match this prompt." in text, text
        assert f"- [0.58 confidence, 1 signal] when {SITUATION}, the user tends to want: {PREDICTION}" in text
        assert "thatch: Situational behaviors: 1 learned rule" in text and "not instructions" in text
        assert "consider: read the \\u202eolder\\u202c review threads \\x1b[31m first" in text
        assert "\u202e" not in text and "\x1b" not in text
        unrelated = context_of(hook(["flush-tools", "--host", host],
                                    hook_payload(payload, project=project, prompt=UNRELATED), env=env), host)
        assert "learned rule" not in unrelated and unrelated.startswith("thatch: After responding")
    alone = hook(["flush-predictions"], hook_payload("claude_user_prompt_submit", project=project, prompt=MATCHING),
                 env=env)
    assert alone.stdout.startswith("thatch: User decision model:") and "Situational" not in alone.stdout
    cursor = hook(["flush-predictions", "--json"],
                  hook_payload("cursor_before_submit_prompt", project=project, prompt=MATCHING), env=env)
    assert PREDICTION in json.loads(cursor.stdout)["additional_context"]
    none = hook(["flush-predictions"], hook_payload("claude_user_prompt_submit", project=project, prompt=UNRELATED),
                env=env)
    assert none.returncode == 0 and none.stdout == ""


def test_without_the_daemon_or_rules_the_hook_is_unchanged(project, env):
    payload = hook_payload("claude_user_prompt_submit", project=project, prompt=MATCHING)
    before = hook(["flush-tools"], payload, env={**env, "THATCH_DAEMON": "0"})
    assert before.stdout.startswith("thatch: After responding") and "learned rule" not in before.stdout
    seed(env, project)
    off = hook(["flush-tools"], payload, env={**env, "THATCH_DAEMON": "0"})
    assert off.returncode == 0 and "learned rule" not in off.stdout


def test_firing_imports_no_cli_or_model_stack(project, env, tmp_path):
    """With rules to score and a warm daemon, the hook still imports no numpy, typing or CLI."""
    seed(env, project)
    assert thatch_process(["daemon", "start"], env=env, cwd=project).returncode == 0
    payload = hook_payload("claude_user_prompt_submit", project=project, prompt=MATCHING)
    result, modules = run_probed(["flush-tools"], env=env, cwd=project, tmp_path=tmp_path, input=payload)
    assert result.returncode == 0 and modules and "User decision model" in result.stdout, result
    assert top_level(modules) & {"typer", "click", "rich", "numpy", "torch", "sentence_transformers", "mcp"} == set()
    assert {"typing", "hashlib"} & modules == set()
