"""The extraction round trip with the real pieces: a host's PostToolBatch
payload through `thatch buffer-batch`, the nudge from `thatch flush-tools`,
`get_extraction_payload` and `memory_remember` through a real MCP client,
and the queue drained."""

from __future__ import annotations

import anyio
import pytest

from thatch_cli.ops.extraction import Queue

from helpers import call_json, hook, hook_payload, mcp_env, mcp_session


@pytest.fixture
def project(git_repo):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


def test_buffer_nudge_fetch_remember_drained(project, isolated_env):
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))
    session = "0f8c2a44-9b1e-4c1f-bb2e-7d3f6a9e1c55"
    assert hook(["buffer-batch"], hook_payload("claude_post_tool_batch", project=project, session=session),
                env=env).returncode == 0
    nudge = hook(["flush-tools"], hook_payload("claude_user_prompt_submit", project=project, session=session,
                                               prompt="carry on with the tests"), env=env).stdout
    assert "2 tool interactions from this session are queued" in nudge and session in nudge

    async def scenario():
        async with mcp_session(env) as session_:
            fetched = call_json(await session_.call_tool("get_extraction_payload", {"session_id": session}))
            after_fetch = hook(["flush-tools"], hook_payload("claude_user_prompt_submit", project=project,
                                                             session=session, prompt="carry on please"),
                               env=env).stdout
            saved = call_json(await session_.call_tool("memory_remember", {
                "label": "Test pool size", "content": "Tests need POOL_SIZE 20 in src/db.ts; run npm test serially."}))
            empty = call_json(await session_.call_tool("get_extraction_payload", {"session_id": session}))
            done = call_json(await session_.call_tool("extraction_done", {"session_id": session}))
            return fetched, after_fetch, saved, empty, done

    (fetch_error, fetched), after_fetch, (save_error, saved), (_, empty), (_, done) = anyio.run(scenario)
    assert not fetch_error and fetched["session_id"] == session and fetched["project_store"] == "acme/widget"
    assert [i["title"] for i in fetched["interactions"]] == ["Bash: npm test -- --runInBand",
                                                             f"Read: {project}/src/db.ts"]
    assert fetched["remaining"] == 0
    assert after_fetch.startswith("thatch: After responding")  # taken: no more extraction nudge
    assert not save_error and "2 queued tool interaction(s)" in saved["notices"][-1]
    assert Queue(env, session).read()["entries"] == [] and Queue(env, session).read()["next"] == 3
    assert empty["interactions"] == [] and done == {"drained": 0, "sessions": [session]}


def test_extraction_done_without_a_session_drops_what_was_handed_out(project, isolated_env):
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))
    hook(["buffer-tool"], hook_payload("cursor_post_tool_use", project=project, session="conv-1"), env=env)

    async def scenario():
        async with mcp_session(env) as session:
            await session.call_tool("get_extraction_payload", {"session_id": "conv-1"})
            hook(["buffer-tool"], hook_payload("codex_post_tool_use", project=project, session="conv-1"), env=env)
            return call_json(await session.call_tool("extraction_done", {}))

    is_error, done = anyio.run(scenario)
    assert not is_error and done == {"drained": 1, "sessions": ["conv-1"]}
    assert [e["tool"] for e in Queue(env, "conv-1").pending()] == ["Bash"]  # arrived after the fetch: kept


def test_a_missing_session_id_is_refused(project):
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))

    async def scenario():
        async with mcp_session(env) as session:
            return call_json(await session.call_tool("get_extraction_payload", {}))

    is_error, data = anyio.run(scenario)
    assert is_error and data["error"]["message"] == "get_extraction_payload needs the argument 'session_id'"


def test_a_capped_payload_leaves_what_it_did_not_show_pending(project, isolated_env):
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))
    queue = Queue(env, "small")
    queue.append([{"tool": "Read", "title": f"Read: f{i}", "input": f"f{i}", "output": "y" * 300}
                  for i in range(6)])

    async def scenario():
        async with mcp_session(env, "--max-chars", "1000") as session_:
            return call_json(await session_.call_tool("get_extraction_payload", {"session_id": "small"}))

    error, fetched = anyio.run(scenario)
    shown = len(fetched["interactions"])
    assert not error and 1 <= shown < 6
    assert fetched["remaining"] == 6 - shown == len(queue.pending())
