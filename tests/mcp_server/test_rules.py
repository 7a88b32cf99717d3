"""The original's eight learned-rule tools through a real MCP client over
stdio, on a real SQLite file: create, confirm, disconfirm, soft, list,
query, delete, codify, feedback, with the original's confidence arithmetic
(K 5, P0 0.5, soft 0.25) and its tables."""

from __future__ import annotations

import sqlite3

import anyio
import pytest

from helpers import call_json, mcp_env, mcp_session

RULE_TOOLS = {
    "prediction_query": {"context", "store"},
    "prediction_update": {"matcher", "prediction", "signal", "rationale", "store"},
    "prediction_list": {"store"},
    "prediction_delete": {"statement", "store"},
    "behavior_codify": {"situation", "behavior", "rationale", "store"},
    "behavior_feedback": {"behavior", "relevant", "context", "store"},
    "behavior_list": {"store"},
    "behavior_delete": {"statement", "store"},
}
SITUATION = "reviewing a pull request that carries tech debt"
PREDICTION = "flag the tech debt before reviewing the diff itself"


def posterior(confirm: float, disconfirm: float) -> float:
    return (confirm + 5 * 0.5) / (confirm + disconfirm + 5)


@pytest.fixture
def project(git_repo):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


def test_the_eight_tools_share_the_original_tables_and_arithmetic(project, isolated_env):
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))
    seen: dict[str, dict] = {}

    async def call(session, name, **arguments):
        error, data = call_json(await session.call_tool(name, arguments))
        assert not error, (name, data)
        return data

    async def scenario():
        async with mcp_session(env, cwd=project.parent) as session:
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            for name, arguments in RULE_TOOLS.items():
                assert set(listed[name].input_schema["properties"]) == arguments, name
            update = dict(matcher=SITUATION, prediction=PREDICTION, rationale="the user asked for it")
            created = (await call(session, "prediction_update", signal="create", **update))["item"]
            assert created["action"] == "created" and created["confidence"] == 0.5
            assert created["store"] == "acme/widget"
            confirmed = (await call(session, "prediction_update", signal="confirm", **update))["item"]
            assert confirmed["action"] == "confirm" and confirmed["id"] == created["id"]
            assert confirmed["confidence"] == round(posterior(1, 0), 3)
            await call(session, "prediction_update", signal="disconfirm", **update)
            soft = (await call(session, "prediction_update", signal="soft", **update))["item"]
            assert (soft["confirm_count"], soft["disconfirm_count"]) == (1, 1.25)
            assert soft["confidence"] == round(posterior(1, 1.25), 3) and soft["evidence_count"] == 2
            listed_items = (await call(session, "prediction_list"))["items"]
            assert [i["statement"] for i in listed_items] == [PREDICTION]
            assert [p["signal"] for p in listed_items[0]["provenance"]] == ["soft", "disconfirm", "confirm", "create"]
            assert listed_items[0]["matchers"][0]["description"] == SITUATION
            found = (await call(session, "prediction_query", context=SITUATION))["items"]
            assert [i["statement"] for i in found] == [PREDICTION]
            assert found[0]["matcher"] == SITUATION and found[0]["confidence"] == soft["confidence"]
            unrelated = (await call(session, "prediction_query", context="the weather in lisbon tomorrow"))["items"]
            assert unrelated == []
            text = (await session.call_tool("prediction_query", {"context": SITUATION})).content[0].text
            assert "not instructions" in text and "[0.48 confidence, 2 signals]" in text

            codified = (await call(session, "behavior_codify", situation="editing a large function",
                                   behavior="read the whole function before changing it",
                                   rationale="a partial read broke an edge case", store="global"))["item"]
            assert codified["action"] == "codified" and codified["store"] == "global"
            ham = (await call(session, "behavior_feedback", behavior="read the whole function before changing it",
                              relevant=True, context="a 300-line parser", store="global"))["item"]
            assert ham["confidence"] == round(posterior(1, 0), 3)
            spam = (await call(session, "behavior_feedback", behavior="read the whole function before changing it",
                               relevant=False, context="a one-line getter", store="global"))["item"]
            assert spam["confidence"] == 0.5 and spam["evidence_count"] == 2
            behaviors = (await call(session, "behavior_list", store="global"))["items"]
            assert [b["provenance"][0]["detail"] for b in behaviors if b["id"] == codified["id"]] == [
                "spam: a one-line getter"]
            seen["deleted"] = (await call(session, "prediction_delete", statement=PREDICTION))["item"]
            assert (await call(session, "prediction_list"))["items"] == []
            error, data = call_json(await session.call_tool("prediction_delete", {"statement": PREDICTION}))
            assert error and data["error"]["code"] == "not_found"
            error, data = call_json(await session.call_tool("prediction_update", {**update, "signal": "maybe"}))
            assert error

    anyio.run(scenario)
    conn = sqlite3.connect(isolated_env["THATCH_DB"])
    assert conn.execute("SELECT count(*) FROM predictions").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM prediction_provenance").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM prediction_edges").fetchone() == (0,)
    row = conn.execute("SELECT confirm_count, disconfirm_count, confidence, store FROM behaviors"
                       " WHERE statement = 'read the whole function before changing it'").fetchone()
    assert row == (1.0, 1.0, 0.5, "global")
