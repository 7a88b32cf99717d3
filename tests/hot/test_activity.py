"""`thatch activity`, `thatch pause` and `thatch resume` through the real
entry points: the session-start and prompt hooks as each host runs them,
a real MCP client, and the command line."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import anyio
import pytest

from thatch_cli.ops import activity
from thatch_cli.ops.context import Context
from thatch_cli.ops.extraction import Queue, interaction
from thatch_cli.ops.remember import remember

from helpers import call_json, hook, hook_payload, mcp_session, thatch_process, thatch_pty

HOSTS = [("claude", "claude_session_start", "claude_user_prompt_submit"),
         ("codex", "codex_session_start", "codex_user_prompt_submit"),
         ("cursor", "cursor_session_start", "cursor_before_submit_prompt")]
PROMPT = "how do we upload the wheel to pypi with twine for a release?"


@pytest.fixture
def project(git_repo):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


@pytest.fixture
def env(isolated_env):
    return {**os.environ, "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0"}


def seed(env, project) -> None:
    with Context(env=env, cwd=project) as ctx:
        remember(ctx, "Tag the commit, build the wheel and upload it to PyPI with twine.", "Release process")
        remember(ctx, "The staging server listens on port 8443 behind the VPN.", "Staging port")
    assert thatch_process(["pin", "Release process"], env=env, cwd=project).returncode == 0


def entries(env, *args: str) -> list[dict]:
    result = thatch_process(["activity", "--json", *args], env=env)
    assert result.returncode == 0, result
    return json.loads(result.stdout)["entries"]


def test_what_each_host_was_given_is_recorded_privately(project, env, isolated_env):
    seed(env, project)
    for host, start, prompt in HOSTS:
        session = f"s-{host}"
        assert hook(["reminder", "--host", host], hook_payload(start, project=project, session=session),
                    env=env).returncode == 0
        result = hook(["flush-tools", "--host", host],
                      hook_payload(prompt, project=project, prompt=PROMPT, session=session), env=env)
        assert result.returncode == 0 and "Release process" in result.stdout
        reminder, nudge = entries(env, "--session", session)
        assert (reminder["event"], reminder["host"], reminder["session"], reminder["store"]) == (
            "reminder", host, session, "acme/widget")
        assert {"label": "Release process", "store": "acme/widget", "score": None} in reminder["items"]
        assert nudge["event"] == "nudge" and nudge["host"] == host
        (item,) = [i for i in nudge["items"] if i["label"] == "Release process"]
        assert item["store"] == "acme/widget" and isinstance(item["score"], float) and item["score"] >= 0.45
    assert len(entries(env)) == 6 and len(entries(env, "--limit", "2")) == 2
    folder = Path(isolated_env["XDG_STATE_HOME"]) / "thatch"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "activity.jsonl").stat().st_mode) == 0o600


def test_the_extraction_nudge_is_recorded(project, env):
    seed(env, project)
    Queue(env, "s-x").append([interaction("Bash", {"command": "make test"}, "ok")])
    result = hook(["flush-tools", "--host", "claude"],
                  hook_payload("claude_user_prompt_submit", project=project, prompt=PROMPT, session="s-x"), env=env)
    assert "get_extraction_payload" in result.stdout
    (entry,) = entries(env, "--session", "s-x")
    assert entry["event"] == "extraction" and entry["items"] == []


def test_the_readable_list_escapes_what_a_host_sent(project, env):
    seed(env, project)
    hook(["reminder", "--host", "claude"], hook_payload("claude_session_start", project=project,
                                                        session="evil\x1b[2J\u202eid"), env=env)
    result = thatch_process(["activity"], env=env)
    assert result.returncode == 0 and "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "reminder\tclaude\tevil\\x1b[2J\\u202eid\tRelease process" in result.stdout
    code, screen = thatch_pty(["activity"], env={**env, "NO_COLOR": "1"}, cols=80)
    lines = screen.splitlines()
    assert code == 0 and lines[0].split() == ["time", "(UTC)", "event", "host", "session", "memories"]
    assert "reminder  claude" in lines[1] and "Release process" in lines[1] and "\x1b[2J" not in screen
    assert all(len(line) <= 80 for line in lines)


def test_recording_can_be_turned_off_and_never_breaks_a_hook(project, env, isolated_env):
    seed(env, project)
    assert thatch_process(["config", "set", "activity.enabled", "false"], env=env).returncode == 0
    result = hook(["reminder", "--host", "claude"], hook_payload("claude_session_start", project=project), env=env)
    assert "Release process" in result.stdout and entries(env) == []
    thatch_process(["config", "unset", "activity.enabled"], env=env)
    # A state directory that cannot be created: the hook still answers in full.
    Path(isolated_env["XDG_STATE_HOME"]).mkdir(parents=True, exist_ok=True)
    (Path(isolated_env["XDG_STATE_HOME"]) / "thatch").write_text("not a directory")
    result = hook(["flush-tools", "--host", "codex"],
                  hook_payload("codex_user_prompt_submit", project=project, prompt=PROMPT), env=env)
    assert result.returncode == 0 and "Release process" in result.stdout and result.stderr == ""


def test_the_record_is_bounded(env, monkeypatch):
    monkeypatch.setattr(activity, "MAX_BYTES", 2_000)
    for n in range(100):
        activity.record(env, "nudge", "claude", f"s{n}", [("x" * 50, "acme/widget", 0.5)])
    folder = Path(env["XDG_STATE_HOME"]) / "thatch"
    assert all(f.stat().st_size <= 2_000 for f in folder.iterdir())
    kept = activity.entries(env)
    assert 5 <= len(kept) < 100 and kept[-1]["session"] == "s99"


def test_pause_silences_every_hook_for_each_host_until_resumed(project, env, tmp_path):
    seed(env, project)
    paused = thatch_process(["pause", "--json"], env=env, cwd=project)
    assert json.loads(paused.stdout) == {"paused": True, "where": "store", "store": "acme/widget", "global": False,
                                         "stores": ["acme/widget"]}
    assert json.loads(thatch_process(["status", "--json"], env=env, cwd=project).stdout)["here"]["paused"] == "store"
    silent = {"claude": "", "codex": "", "cursor": ""}
    for host, start, prompt in HOSTS:
        first = hook(["reminder", "--host", host], hook_payload(start, project=project), env=env)
        nudge = hook(["flush-tools", "--host", host], hook_payload(prompt, project=project, prompt=PROMPT), env=env)
        assert (first.returncode, first.stdout) == (0, silent[host])
        assert nudge.returncode == 0
        if host == "cursor":
            assert json.loads(nudge.stdout) == {"continue": True}
        else:
            assert nudge.stdout == ""
    assert entries(env) == []
    # Another repository is not paused; --global pauses it too.
    elsewhere = hook(["reminder", "--host", "claude"], hook_payload("claude_session_start", project=tmp_path), env=env)
    assert "Memory for" in elsewhere.stdout
    thatch_process(["pause", "--global"], env=env, cwd=tmp_path)
    assert hook(["reminder", "--host", "claude"], hook_payload("claude_session_start", project=tmp_path),
                env=env).stdout == ""
    assert "everywhere" in thatch_process(["status"], env=env, cwd=tmp_path).stdout
    thatch_process(["resume", "--global"], env=env)
    assert thatch_process(["resume"], env=env, cwd=project).returncode == 0
    assert json.loads(thatch_process(["status", "--json"], env=env, cwd=project).stdout)["here"]["paused"] is None
    result = hook(["flush-tools", "--host", "claude"],
                  hook_payload("claude_user_prompt_submit", project=project, prompt=PROMPT), env=env)
    assert "Release process" in result.stdout


def test_mcp_results_are_recorded_and_answer_while_paused(project, env):
    seed(env, project)
    thatch_process(["pause", "--global"], env=env)

    async def scenario() -> None:
        async with mcp_session(env, cwd=project) as session:
            error, found = call_json(await session.call_tool("memory_recall", {"query": "release wheel twine"}))
            assert not error and found["results"][0]["label"] == "Release process"
            error, _shown = call_json(await session.call_tool("memory_show", {"label": "Staging port"}))
            assert not error
            await session.call_tool("memory_list", {})

    anyio.run(scenario)
    recall, show = entries(env)
    assert (recall["event"], recall["host"], recall["session"]) == ("mcp", "mcp", None)
    assert recall["items"][0]["label"] == "Release process" and isinstance(recall["items"][0]["score"], float)
    assert show["items"] == [{"label": "Staging port", "store": "acme/widget", "score": None}]
