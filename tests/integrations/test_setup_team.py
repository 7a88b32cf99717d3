"""`thatch setup claude` in a repository that commits its host files (issue
28): the shared files hold nothing of this machine, a teammate whose thatch
is elsewhere gets a working thatch from them, and one without thatch gets
silence from every hook and the MCP command; `setup --status` warns about a
tracked file that still holds a machine path."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import git, hook_payload

EXE_DIR = str(Path(sys.executable).parent)
SHARED = (".mcp.json", ".claude/settings.json", "CLAUDE.md")
BARE_PATH = "/usr/bin:/bin"  # sh, git; no thatch


def thatch(args: list[str], cwd: Path, path: str, program: str = f"{EXE_DIR}/thatch") -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": path, "THATCH_MODEL": "fake:64"}
    return subprocess.run([program, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def commands(clone: Path) -> dict[str, str]:
    hooks = json.loads((clone / ".claude/settings.json").read_text())["hooks"]
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in hooks.items()}


def as_claude_runs(command: str, payload: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """A hook as Claude Code runs it: the command line through a shell, the payload on stdin."""
    return subprocess.run(command, shell=True, input=payload, capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=30)


def own_env(clone: Path) -> dict[str, str]:
    local = clone / ".claude/settings.local.json"
    return json.loads(local.read_text()).get("env", {}) if local.exists() else {}


@pytest.fixture
def shared(git_repo, tmp_path):
    """A repository whose .mcp.json and .claude/settings.json are tracked, set up and committed by its first user."""
    project = git_repo("widget", remote="git@github.com:acme/widget.git")
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").write_text('{"permissions": {"allow": ["Bash(npm test)"]}}\n')
    (project / ".mcp.json").write_text('{"mcpServers": {}}\n')
    git(project, "add", ".")
    git(project, "commit", "-qm", "host files")
    done = thatch(["setup", "claude", "--json"], project, f"{EXE_DIR}:{BARE_PATH}")
    assert done.returncode == 0, done.stderr
    git(project, "add", *SHARED)
    git(project, "commit", "-qm", "thatch")
    return project


def test_the_shared_files_hold_nothing_of_this_machine(shared, isolated_env):
    for name in SHARED:
        text = (shared / name).read_text()
        for machine in (EXE_DIR, isolated_env["HOME"], isolated_env["THATCH_DB"], sys.executable):
            assert machine not in text, (name, machine)
    assert git(shared, "ls-files", ".claude/settings.local.json") == ""
    status = json.loads(thatch(["setup", "--status", "claude", "--json"], shared, f"{EXE_DIR}:{BARE_PATH}").stdout)
    project = next(s for s in status["hosts"] if s["scope"] == "project")
    assert project["state"] == "wired" and not project["warnings"]


def test_a_tracked_file_with_a_machine_path_is_warned_about(shared):
    settings = shared / ".claude/settings.json"
    settings.write_text(settings.read_text().replace('exec \\"$t\\" reminder', f'exec {EXE_DIR}/thatch reminder'))
    git(shared, "commit", "-qam", "an older setup")
    status = json.loads(thatch(["setup", "--status", "claude", "--json"], shared, f"{EXE_DIR}:{BARE_PATH}").stdout)
    warnings = next(s for s in status["hosts"] if s["scope"] == "project")["warnings"]
    assert any(w.startswith(".claude/settings.json is tracked by git and holds a path of this machine") for w in warnings)
    untracked = json.loads(thatch(["setup", "--status", "claude", "--json"], shared, f"{EXE_DIR}:{BARE_PATH}").stdout)
    assert not any("settings.local.json" in w for s in untracked["hosts"] for w in s["warnings"])


def test_a_teammate_with_thatch_elsewhere_gets_it_from_the_shared_files(shared, tmp_path, isolated_env):
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(shared), str(clone))
    git(clone, "remote", "set-url", "origin", "git@github.com:acme/widget.git")
    elsewhere = tmp_path / "opt" / "bin"
    elsewhere.mkdir(parents=True)
    (elsewhere / "thatch").write_text(f'#!/bin/sh\nexec {EXE_DIR}/thatch "$@"\n')
    (elsewhere / "thatch").chmod(0o755)
    path = f"{elsewhere}:{BARE_PATH}"
    env = {**os.environ, "PATH": path, "THATCH_MODEL": "fake:64"}
    remembered = thatch(["remember", "Release process", "Tag, build the wheel, upload it with twine."], clone, path)
    assert remembered.returncode == 0, remembered.stderr

    hooks = commands(clone)
    started = as_claude_runs(hooks["SessionStart"], hook_payload("claude_session_start", project=clone), clone, env)
    assert started.returncode == 0 and not started.stderr, started
    assert json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"].startswith("thatch: Memory for acme/widget")
    asked = as_claude_runs(hooks["UserPromptSubmit"], hook_payload("claude_user_prompt_submit", project=clone,
                                                                   prompt="how do we upload the wheel with twine?"),
                           clone, env)
    assert asked.returncode == 0 and "Release process" in asked.stdout, asked

    server = json.loads((clone / ".mcp.json").read_text())["mcpServers"]["thatch"]
    assert "Release process" in asyncio.run(_recall(server, env, clone))

    # Their own setup changes none of the shared files; what is theirs goes to settings.local.json.
    assert thatch(["setup", "claude", "--json"], clone, path, program=str(elsewhere / "thatch")).returncode == 0
    assert git(clone, "status", "--porcelain", "--untracked-files=no") == ""
    assert own_env(clone)["THATCH_BIN"] == f"{EXE_DIR}/thatch"  # not the `thatch` on their PATH
    assert own_env(clone)["THATCH_DB"] == isolated_env["THATCH_DB"]
    again = as_claude_runs(hooks["SessionStart"], hook_payload("claude_session_start", project=clone), clone,
                           {**env, "PATH": BARE_PATH, **own_env(clone)})
    assert again.returncode == 0 and "thatch: Memory for acme/widget" in again.stdout, again


async def _recall(server: dict, env: dict[str, str], cwd: Path) -> str:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=server["command"], args=server["args"], env=env, cwd=str(cwd))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as client:
            await client.initialize()
            result = await client.call_tool("memory_recall", {"query": "release process"})
            return "".join(getattr(part, "text", "") for part in result.content)


def test_a_teammate_without_thatch_gets_silence(shared, tmp_path):
    clone = tmp_path / "newcomer"
    git(tmp_path, "clone", "-q", str(shared), str(clone))
    env = {**os.environ, "PATH": BARE_PATH}
    payloads = {"SessionStart": hook_payload("claude_session_start", project=clone),
                "UserPromptSubmit": hook_payload("claude_user_prompt_submit", project=clone, prompt="hi"),
                "PostToolBatch": hook_payload("claude_post_tool_batch", project=clone),
                "PostToolUse": json.dumps({"session_id": "s", "cwd": str(clone), "tool_name": "Bash"})}
    hooks = commands(clone)
    assert set(hooks) & {"PostToolBatch", "PostToolUse"}
    for event, command in hooks.items():
        ran = as_claude_runs(command, payloads[event], clone, env)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", ""), (event, ran)
    server = json.loads((clone / ".mcp.json").read_text())["mcpServers"]["thatch"]
    ran = subprocess.run([server["command"], *server["args"]], input="", capture_output=True, text=True, env=env,
                         cwd=clone, timeout=30)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")


def test_cursor_project_files_name_thatch_unless_this_machine_needs_more(git_repo, tmp_path, isolated_env):
    """Cursor keeps no per-user file for a project: with thatch on PATH and
    default settings, .cursor/ holds the guarded commands; otherwise it holds
    this machine's path and setup says so."""
    project = git_repo("widget")
    plain = {"HOME": isolated_env["HOME"], "PATH": f"{EXE_DIR}:{BARE_PATH}", "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run([f"{EXE_DIR}/thatch", "setup", "cursor", "--json"], cwd=project, env=plain,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not any("Cursor keeps no per-user file" in n for n in json.loads(done.stdout)["notes"])
    for name in (".cursor/hooks.json", ".cursor/mcp.json"):
        assert EXE_DIR not in (project / name).read_text() and isolated_env["HOME"] not in (project / name).read_text()
    hooks = json.loads((project / ".cursor/hooks.json").read_text())["hooks"]
    for event, entries in hooks.items():
        ran = as_claude_runs(entries[-1]["command"], json.dumps({"conversation_id": "c", "workspace_roots": [str(project)]}),
                             project, {**plain, "PATH": BARE_PATH})
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", ""), (event, ran)
    started = as_claude_runs(hooks["sessionStart"][-1]["command"], hook_payload("cursor_session_start", project=project),
                             project, {**plain, "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0"})
    assert started.returncode == 0 and json.loads(started.stdout)["additional_context"].startswith("thatch: "), started

    custom = thatch(["setup", "cursor", "--json"], project, f"{EXE_DIR}:{BARE_PATH}")  # THATCH_DB set (conftest)
    assert custom.returncode == 0 and any("Cursor keeps no per-user file" in n for n in json.loads(custom.stdout)["notes"])
    assert json.loads((project / ".cursor/mcp.json").read_text())["mcpServers"]["thatch"]["env"]["THATCH_DB"] == \
        isolated_env["THATCH_DB"]


def codex_commands(project: Path) -> tuple[dict[str, str], dict]:
    import tomllib

    config = tomllib.loads((project / ".codex/config.toml").read_text())
    hooks = {event: groups[-1]["hooks"][0]["command"] for event, groups in config["hooks"].items()}
    return hooks, config["mcp_servers"]["thatch"]


@pytest.fixture
def shared_codex(git_repo):
    """A repository whose first user ran `thatch setup codex` (project scope, THATCH_DB set) and committed it."""
    project = git_repo("widget", remote="git@github.com:acme/widget.git")
    done = thatch(["setup", "codex", "--json"], project, f"{EXE_DIR}:{BARE_PATH}")
    assert done.returncode == 0, done.stderr
    git(project, "add", ".codex/config.toml", "AGENTS.md")
    git(project, "commit", "-qm", "thatch")
    return project, json.loads(done.stdout)


def test_codex_project_file_holds_nothing_of_this_machine(shared_codex, isolated_env):
    project, report = shared_codex
    text = (project / ".codex/config.toml").read_text()
    for machine in (EXE_DIR, isolated_env["HOME"], isolated_env["THATCH_DB"], sys.executable):
        assert machine not in text, machine
    _hooks, server = codex_commands(project)
    assert "required" not in server and "env" not in server  # Codex starts without it; no values, only names
    assert {"THATCH_BIN", "THATCH_DB"} <= set(server["env_vars"])
    assert any(n.startswith("this machine's ") and f"THATCH_DB={isolated_env['THATCH_DB']}" in n and "export them in the shell that starts Codex" in n
               for n in report["notes"])
    status = json.loads(thatch(["setup", "--status", "codex", "--json"], project, f"{EXE_DIR}:{BARE_PATH}").stdout)
    where = next(s for s in status["hosts"] if s["scope"] == "project")
    assert where["state"] == "wired" and not where["warnings"]


def test_a_tracked_codex_file_with_a_machine_path_is_warned_about(shared_codex):
    project, _report = shared_codex
    config = project / ".codex/config.toml"
    import tomlkit

    from thatch_cli.integrations.hosts.managed import guarded

    older = tomlkit.item(f"{EXE_DIR}/thatch reminder --host codex").as_string()  # what setup wrote before
    config.write_text(config.read_text().replace(tomlkit.item(guarded("reminder --host codex")).as_string(), older))
    assert older in config.read_text()
    git(project, "commit", "-qam", "an older setup")
    status = json.loads(thatch(["setup", "--status", "codex", "--json"], project, f"{EXE_DIR}:{BARE_PATH}").stdout)
    warnings = next(s for s in status["hosts"] if s["scope"] == "project")["warnings"]
    assert any(w.startswith(".codex/config.toml is tracked by git and holds a path of this machine") for w in warnings)
    assert thatch(["setup", "codex"], project, f"{EXE_DIR}:{BARE_PATH}").returncode == 0  # rerunning setup fixes it
    assert EXE_DIR not in config.read_text() and config.read_text().count("reminder --host codex") == 1


def test_a_codex_teammate_without_thatch_gets_silence_and_one_with_it_gets_memory(shared_codex, tmp_path,
                                                                                    isolated_env):
    project, _report = shared_codex
    clone = tmp_path / "newcomer"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    hooks, server = codex_commands(clone)
    payload = hook_payload("codex_session_start", project=clone)
    bare = {**os.environ, "PATH": BARE_PATH}
    for event, command in hooks.items():
        ran = as_claude_runs(command, payload, clone, bare)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", ""), (event, ran)
    ran = subprocess.run([server["command"], *server["args"]], input="", capture_output=True, text=True, env=bare,
                         cwd=clone, timeout=30)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")

    # With THATCH_BIN (and THATCH_DB) exported in the shell that starts Codex, the same file runs their thatch.
    git(clone, "remote", "set-url", "origin", "git@github.com:acme/widget.git")
    mine = {**bare, "THATCH_BIN": f"{EXE_DIR}/thatch", "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0"}
    remembered = subprocess.run([f"{EXE_DIR}/thatch", "remember", "Release process", "Tag, build, upload."], cwd=clone,
                                env=mine, capture_output=True, text=True, timeout=60)
    assert remembered.returncode == 0, remembered
    started = as_claude_runs(hooks["SessionStart"], payload, clone, mine)
    assert started.returncode == 0, started
    assert json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"].startswith("thatch: Memory for acme/widget")
