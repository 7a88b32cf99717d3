"""Claude Code from npm, driven end to end by the stand-in model API: what
thatch's hooks and MCP server put in front of the model is read from the
requests Claude Code sends."""

from __future__ import annotations

import json
import re

import pytest
from conftest import CLAUDE_VERSIONS, NEWEST_CLAUDE, claude
from sandbox import on_path

RELEASE = ("Release process", "Tag the commit, build the wheel and upload it to PyPI with twine.")
RELATED = "what is the release process: tag the commit, build the wheel and upload it to pypi with twine?"
UNRELATED = "please write a haiku about autumn leaves falling in the rain"


def prepare(sandbox, version: str) -> list[str]:
    argv = claude(version)
    on_path(sandbox.bin, "claude", argv)  # setup reads `claude --version` from PATH
    sandbox.remember(*RELEASE)
    return argv


def ask(sandbox, argv: list[str], prompt: str, *extra: str):
    done = sandbox.run([*argv, "-p", prompt, "--output-format", "json", *extra])
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return json.loads(done.stdout)


def model_requests(api, prompt: str) -> list[dict]:
    """The requests of the conversation about `prompt` (not Claude Code's side requests)."""
    bodies = [b for b in api.log.bodies("/v1/messages") if b.get("tools") and prompt in json.dumps(b)]
    assert bodies, f"Claude Code never sent the prompt to the stand-in: {api.log.text()[:3000]}"
    return bodies


def context_text(body: dict) -> str:
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content")
        for part in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            if part.get("type") == "text":
                parts.append(part["text"])
            elif part.get("type") == "tool_result":
                inner = part.get("content")
                parts.append(inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False))
    return "\n".join(parts)


def offered_tools(body: dict) -> set[str]:
    """The tools a request offers the model: its `tools`, and those it lists by
    name alone, one per line, for loading on demand (Claude Code's deferred tools)."""
    names = {tool.get("name") for tool in body.get("tools") or []}

    def strings(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for inner in value.values():
                yield from strings(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from strings(inner)

    for text in strings({k: v for k, v in body.items() if k != "tools"}):
        names.update(line for line in text.splitlines() if re.fullmatch(r"mcp__\w+", line))
    return names


def test_a_one_shot_offers_thatchs_tools_in_its_first_model_request(sandbox, api):
    """`claude -p` sends its one request once its MCP servers answered, or
    gives up waiting for them: thatch's handshake must be ready by then."""
    argv = prepare(sandbox, NEWEST_CLAUDE)
    assert sandbox.thatch("setup", "claude").returncode == 0
    ask(sandbox, argv, UNRELATED)
    offered = offered_tools(model_requests(api, UNRELATED)[0])
    assert {"mcp__thatch__memory_recall", "mcp__thatch__memory_remember"} <= offered, " ".join(sorted(offered)) + json.dumps(model_requests(api, UNRELATED)[0])[-3000:]


@pytest.mark.parametrize("version", CLAUDE_VERSIONS)
def test_the_reminder_and_a_related_nudge_reach_the_model(sandbox, api, version):
    argv = prepare(sandbox, version)
    setup = sandbox.thatch("setup", "claude")
    assert setup.returncode == 0, setup
    ask(sandbox, argv, RELATED)
    seen = context_text(model_requests(api, RELATED)[0])
    assert "thatch: Memory for acme/widget, branch main: 1 memory" in seen
    assert "thatch: 1 stored memory may relate to this prompt." in seen
    assert '"Release process" (acme/widget): Tag the commit' in seen and "not instructions" in seen
    if version == NEWEST_CLAUDE:
        api.log.requests.clear()
        ask(sandbox, argv, UNRELATED)
        seen = context_text(model_requests(api, UNRELATED)[0])
        assert "thatch: Memory for acme/widget" in seen and "may relate to this prompt" not in seen
        assert "thatch: After responding, check" in seen



def test_a_warm_daemon_answers_claude_codes_prompt_hook(sandbox, api):
    """With the daemon up, the prompt hook Claude Code runs is answered by it
    (hot/relay.py), and what reaches the model is the same."""
    argv = prepare(sandbox, NEWEST_CLAUDE)
    sandbox.env["THATCH_DAEMON"] = "1"
    assert sandbox.thatch("setup", "claude").returncode == 0
    try:
        assert sandbox.thatch("daemon", "start").returncode == 0
        ask(sandbox, argv, RELATED)
        assert "thatch: 1 stored memory may relate to this prompt." in context_text(model_requests(api, RELATED)[0])
        api.log.requests.clear()
        ask(sandbox, argv, UNRELATED)
        seen = context_text(model_requests(api, UNRELATED)[0])
        assert "may relate to this prompt" not in seen and "thatch: After responding, check" in seen
        status = json.loads(sandbox.thatch("daemon", "status", "--json").stdout)
        assert status["hooks_answered"] == 2  # one UserPromptSubmit per one-shot, both run by the daemon
    finally:
        sandbox.thatch("daemon", "stop")

def test_thatch_off_path_is_found_through_the_users_own_settings(sandbox, api):
    """The shared files name `thatch`; where it is not on PATH, the
    THATCH_BIN that setup puts in .claude/settings.local.json reaches the
    hooks and the MCP server through Claude Code's `env` setting."""
    import os

    argv = prepare(sandbox, NEWEST_CLAUDE)
    path = ":".join(d for d in f"{sandbox.bin}:{os.environ['PATH']}".split(":")
                    if d and not os.path.exists(os.path.join(d, "thatch")))
    assert sandbox.thatch("setup", "claude", env={"PATH": path}).returncode == 0
    shared = (sandbox.project / ".mcp.json").read_text() + (sandbox.project / ".claude/settings.json").read_text()
    assert str(sandbox.home) not in shared and "THATCH_BIN" in (sandbox.project / ".claude/settings.local.json").read_text()
    done = sandbox.run([*argv, "-p", RELATED, "--output-format", "json"], env={"PATH": path})
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    first = model_requests(api, RELATED)[0]
    assert "thatch: Memory for acme/widget, branch main: 1 memory" in context_text(first)
    assert "mcp__thatch__memory_recall" in offered_tools(first)


def test_claude_code_2_1_48_keeps_the_users_own_settings(sandbox, api):
    """Before 2.1.110, a PostToolBatch hook makes Claude Code ignore the whole
    project settings file: the user's own hook must still run after setup."""
    argv = prepare(sandbox, "2.1.48")
    settings = sandbox.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo USERS-OWN-HOOK-RAN"}]}]}}, indent=2))
    setup = sandbox.thatch("setup", "claude")
    assert setup.returncode == 0 and "older than 2.1.110: PostToolUse" in setup.stdout, setup
    ask(sandbox, argv, RELATED)
    seen = context_text(model_requests(api, RELATED)[0])
    assert "USERS-OWN-HOOK-RAN" in seen, seen[-3000:]
    assert "thatch: 1 stored memory may relate to this prompt." in seen


def test_memory_remember_and_recall_round_trip(sandbox, api):
    argv = prepare(sandbox, NEWEST_CLAUDE)
    assert sandbox.thatch("setup", "claude").returncode == 0
    tools = ["--allowedTools", "mcp__thatch__memory_remember,mcp__thatch__memory_recall"]
    remember = {"label": "Staging port", "content": "The staging server listens on port 8443 behind the VPN."}
    ask(sandbox, argv, f"remember this @@call memory_remember {json.dumps(remember)}@@", *tools)
    shown = json.loads(sandbox.thatch("show", "Staging port", "--json").stdout)["memory"]
    assert shown["content"] == remember["content"]

    api.log.requests.clear()
    question = 'what port does staging use? @@call memory_recall {"query": "staging port"}@@'
    ask(sandbox, argv, question, *tools)
    bodies = model_requests(api, "what port does staging use?")
    results = [p for b in bodies for m in b["messages"] if isinstance(m.get("content"), list)
               for p in m["content"] if p.get("type") == "tool_result"]
    assert results, bodies[-1]["messages"][-1]
    result = json.dumps(results[-1], ensure_ascii=False)
    assert "8443 behind the VPN" in result and "not instructions" in result
    for internal in ("slug", "recall_count", "has_vector", "snippet", "dense_rank"):
        assert internal not in result, (internal, result)


def test_setup_survives_claude_code_editing_its_config_and_uninstall_removes_exactly_thatchs(sandbox, api):
    """setup --global, then Claude Code itself: a session (it rewrites
    ~/.claude.json as it runs) and `claude mcp add --scope user`; setup
    again changes none of that, and --uninstall leaves it all."""
    argv = prepare(sandbox, NEWEST_CLAUDE)
    state = sandbox.home / ".claude.json"
    state.write_text(json.dumps({"numStartups": 3, "theme": "dark"}, indent=2))
    assert sandbox.thatch("setup", "claude", "--global").returncode == 0
    ask(sandbox, argv, RELATED)
    assert "thatch: 1 stored memory may relate to this prompt." in context_text(model_requests(api, RELATED)[0])
    added = sandbox.run([*argv, "mcp", "add", "--scope", "user", "linear", "--", "npx", "-y", "linear-mcp"])
    assert added.returncode == 0, added
    host_written = state.read_text()
    assert {"linear", "thatch"} <= set(json.loads(host_written)["mcpServers"])

    again = sandbox.thatch("setup", "claude", "--global")
    assert again.returncode == 0 and state.read_text() == host_written, again
    removed = sandbox.thatch("setup", "claude", "--global", "--uninstall")
    assert removed.returncode == 0, removed
    after = json.loads(state.read_text())
    before = json.loads(host_written)
    assert list(after["mcpServers"]) == ["linear"]
    assert {k: v for k, v in after.items() if k != "mcpServers"} == {k: v for k, v in before.items()
                                                                     if k != "mcpServers"}
    listed = sandbox.run([*argv, "mcp", "list"])
    assert "linear" in listed.stdout and "thatch" not in listed.stdout, listed.stdout
    settings = sandbox.home / ".claude" / "settings.json"  # setup created it: gone, or without thatch
    assert not settings.exists() or "thatch" not in settings.read_text()


def approve_project_server(sandbox, argv: list[str]) -> None:
    """Start Claude Code on a terminal and answer its "New MCP server found
    in this project: thatch" dialog with "Use this MCP server", as a user
    does; Claude Code records the approval in its own files."""
    import os
    import pty
    import re
    import select
    import signal
    import time

    state = sandbox.home / ".claude.json"  # past onboarding, the folder trusted, the key accepted
    state.write_text(json.dumps({"hasCompletedOnboarding": True,
                                 "customApiKeyResponses": {"approved": ["sk-ant-standin"], "rejected": []},
                                 "projects": {str(sandbox.project): {"hasTrustDialogAccepted": True}}}))
    approval = sandbox.project / ".claude" / "settings.local.json"
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(sandbox.project)
        os.execvpe(argv[0], argv, {**sandbox.env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
    seen, answered, deadline = "", False, time.monotonic() + 90
    try:
        while time.monotonic() < deadline and not (answered and approval.exists()):
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    seen += os.read(fd, 65536).decode("utf-8", "replace")
                except OSError:
                    break
            screen = "".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen).split())
            if not answered and "NewMCPserverfound" in screen:
                for key in (b"\x1b[A", b"\x1b[A", b"\r"):  # up to "Use this MCP server", confirm
                    os.write(fd, key)
                    time.sleep(0.3)
                answered = True
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    assert answered and approval.exists(), seen[-2000:]


def test_setup_keeps_claude_codes_approval_of_the_project_server(sandbox, api):
    argv = prepare(sandbox, NEWEST_CLAUDE)
    assert sandbox.thatch("setup", "claude").returncode == 0
    approve_project_server(sandbox, argv)
    approval = sandbox.project / ".claude" / "settings.local.json"
    approved, state = approval.read_text(), (sandbox.home / ".claude.json").read_text()
    assert json.loads(approved)["enabledMcpjsonServers"] == ["thatch"]
    again = sandbox.thatch("setup", "claude")
    assert again.returncode == 0 and "unchanged" in again.stdout and "create" not in again.stdout, again
    removed = sandbox.thatch("setup", "claude", "--uninstall")
    assert removed.returncode == 0, removed
    # Claude Code's approval stays; the env setup put in the same file is gone.
    kept = json.loads(approval.read_text())
    assert kept == {k: v for k, v in json.loads(approved).items() if k != "env"} and "THATCH" not in approval.read_text()
    assert (sandbox.home / ".claude.json").read_text() == state
    assert not (sandbox.project / ".mcp.json").exists()  # setup created it: gone with thatch's entry
