"""Claude Code from npm, driven end to end by the stand-in model API: what
thatch's hooks and MCP server put in front of the model is read from the
requests Claude Code sends."""

from __future__ import annotations

import json

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
