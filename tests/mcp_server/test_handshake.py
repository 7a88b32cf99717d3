"""`thatch mcp` answers the host's handshake before the SDK is imported
(mcp/handshake.py): the same answers the SDK gives, even while importing the
SDK hangs, and a session that goes on to call tools works as before."""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from thatch_cli.mcp import handshake

from helpers import call_json, mcp_env, mcp_session

CLIENT = {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def initialize(version: str, ident: int = 1, **params) -> dict:
    return {"jsonrpc": "2.0", "id": ident, "method": "initialize",
            "params": {"protocolVersion": version, **CLIENT, **params}}


def exchange(messages: list[dict], env: dict[str, str], timeout: float = 60) -> list[dict]:
    """The answers of one `thatch mcp` to `messages`, sent one at a time (each
    request's answer awaited before the next line)."""
    process = subprocess.Popen([sys.executable, "-m", "thatch_cli", "mcp"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    answers = []
    try:
        for message in messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            if "id" in message:
                ready, _, _ = select.select([process.stdout], [], [], timeout)
                assert ready, f"no answer to {message} within {timeout}s"
                answers.append(json.loads(process.stdout.readline()))
    finally:
        process.stdin.close()
        process.wait(timeout=30)
    return answers


# A notification no handshake answers: sent first, it hands everything to the SDK.
TO_THE_SDK = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
OPENING = [{"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
           {"jsonrpc": "2.0", "id": "p", "method": "ping"}]


@pytest.mark.parametrize("first", [
    *[initialize(v) for v in handshake.PROTOCOL_VERSIONS],
    initialize("2099-01-01"),  # a version the handshake does not know: the SDK answers it
    initialize("2025-06-18", capabilities={"roots": {"listChanged": True}}, _meta={"x": 1}),
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},  # malformed
])
def test_the_early_answers_are_the_sdks(first, isolated_env):
    env = mcp_env()
    early = exchange([first, *OPENING], env)
    assert early == exchange([TO_THE_SDK, first, *OPENING], env)
    assert early[0]["id"] == 1


# How Claude Code 2.1.332 opens: a probe for the stateless era, each request naming the client in _meta.
META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
                  "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}}}}
MODERN = [{"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover", "params": META},
          {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": META},
          {"jsonrpc": "2.0", "id": 3, "method": "ping", "params": META},
          {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
           "params": {"name": "store_list", "arguments": {}, **META}}]


def test_the_stateless_opening_is_answered_as_the_sdk_does(isolated_env):
    env = mcp_env()
    early = exchange(MODERN, env)
    assert early == exchange([TO_THE_SDK, *MODERN], env)
    assert early[0]["result"]["supportedVersions"] == ["2026-07-28"] and early[1]["result"]["tools"]
    assert early[3]["result"]["structuredContent"]["stores"][0]["name"] == "global"


def test_the_handshake_knows_the_versions_the_sdk_negotiates(isolated_env):
    from mcp.server.runner import HANDSHAKE_PROTOCOL_VERSIONS

    assert handshake.PROTOCOL_VERSIONS == tuple(HANDSHAKE_PROTOCOL_VERSIONS)
    assert exchange(MODERN[:1], mcp_env())[0]["result"]["supportedVersions"] == [handshake.MODERN_VERSION]


def test_the_handshake_does_not_wait_for_the_sdk(isolated_env, tmp_path: Path):
    """With the SDK's import stuck, initialize, tools/list and ping are still answered."""
    stuck = tmp_path / "stuck"
    stuck.mkdir()
    (stuck / "mcp_types.py").write_text("import time\ntime.sleep(120)\n")
    env = mcp_env(PYTHONPATH=str(stuck))
    started = time.monotonic()
    answers = exchange([initialize("2025-06-18"), *OPENING], env, timeout=20)
    assert [a["id"] for a in answers] == [1, 2, "p"] and time.monotonic() - started < 60
    assert [a["id"] for a in exchange(MODERN[:2], env, timeout=20)] == ["server-discover-probe-1", 2]
    names = [tool["name"] for tool in answers[1]["result"]["tools"]]
    assert "memory_recall" in names and "memory_remember" in names


def test_a_session_goes_on_to_call_tools(isolated_env):
    async def scenario():
        async with mcp_session(mcp_env()) as session:
            listed = await session.list_tools()
            saved = call_json(await session.call_tool("memory_remember", {
                "label": "Release process", "content": "Tag the commit and upload the wheel.", "store": "global"}))
            found = call_json(await session.call_tool("memory_recall", {"query": "release", "store": "global"}))
            return [tool.name for tool in listed.tools], saved, found

    names, (saved_error, _), (found_error, found) = anyio.run(scenario)
    assert "memory_show" in names and not saved_error and not found_error
    assert [r["label"] for r in found["results"]] == ["Release process"]
