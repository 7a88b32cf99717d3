"""Tool results within their character cap, in-process (the runner the
server uses, without the stdio transport): whole items dropped from the
end, an oversized text cut, and both said in the result."""

from __future__ import annotations

import json

import pytest

from thatch_cli.mcp.results import Reply, cap, size
from thatch_cli.mcp.server import ToolRunner

from helpers import mcp_env


@pytest.fixture
def runner(git_repo, isolated_env):
    project = git_repo("widget", remote="git@github.com:acme/widget.git")

    def make(max_chars: int = 20_000) -> ToolRunner:
        return ToolRunner(mcp_env(CLAUDE_PROJECT_DIR=str(project)), max_chars=max_chars)

    return make


def call(runner: ToolRunner, name: str, **args) -> Reply:
    reply = runner.call(name, args)
    assert not reply.is_error, reply.data
    return reply


def fill(runner: ToolRunner, count: int, body: str) -> None:
    for i in range(count):
        call(runner, "memory_remember", label=f"deploy note {i}", content=f"deploy step {i}: {body}")


def test_a_small_result_is_untouched(runner):
    tools = runner()
    fill(tools, 2, "short")
    reply = call(tools, "memory_recall", query="deploy step")
    assert "capped" not in reply.data and "[capped]" not in reply.text()
    assert "budget" not in reply.data


def test_recall_drops_whole_results_from_the_end_and_says_how_to_narrow(runner):
    tools = runner(max_chars=3_000)
    fill(tools, 12, "x" * 400)
    reply = call(tools, "memory_recall", query="deploy step", limit=12)
    kept, note = reply.data["results"], reply.data["capped"]
    assert 1 <= len(kept) < 12 and note["omitted"] == {"results": 12 - len(kept)}
    assert size(reply.data) <= 3_000 and len(reply.text()) <= 3_000
    assert "limit" in note["message"] and reply.text().endswith(note["message"])
    full = call(runner(), "memory_recall", query="deploy step", limit=12).data["results"]
    assert [r["label"] for r in kept] == [r["label"] for r in full[: len(kept)]]  # best first


def test_a_budget_caps_one_recall_like_the_cli_option(runner):
    tools = runner()
    fill(tools, 10, "y" * 300)
    reply = call(tools, "memory_recall", query="deploy step", budget=2_000)
    assert reply.data["budget"] == {"chars": 2_000, "omitted": 10 - len(reply.data["results"])}
    assert len(json.dumps(reply.data)) <= 2_100 and len(reply.text()) <= 2_000


def test_a_memory_longer_than_the_cap_is_cut_and_says_so(runner):
    tools = runner(max_chars=20_000)
    body = "z" * 60_000
    call(tools, "memory_remember", label="huge", content=body)
    reply = call(tools, "memory_show", label="huge")
    cut = reply.data["capped"]["cut"]
    assert cut["field"] == "memory.content" and cut["chars"] == 60_000 and 10_000 < cut["shown"] < 20_000
    assert reply.data["memory"]["content"].endswith("…") and len(reply.text()) <= 20_000
    assert "thatch show" in reply.data["capped"]["message"]


def test_a_long_single_result_keeps_its_head(runner):
    tools = runner(max_chars=5_000)
    call(tools, "memory_remember", label="huge", content="deploy step " + "w" * 30_000)
    reply = call(tools, "memory_recall", query="deploy step")
    assert len(reply.data["results"]) == 1 and reply.data["capped"]["cut"]["field"] == "results.0.content"


def test_integral_numbers_are_read_as_integers(runner):
    tools = runner()
    saved = call(tools, "memory_remember", label="n", content="five", confidence=5.0)
    assert saved.data["memory"]["confidence"] == 5 and isinstance(saved.data["memory"]["confidence"], int)
    refused = tools.call("memory_remember", {"label": "n", "content": "x", "confidence": True})
    assert refused.is_error and refused.data["error"]["message"] == "confidence must be an integer, got True"


def test_cap_keeps_a_document_with_nothing_to_cut_honest():
    reply = Reply({"note": "a" * 5_000}, lambda data: data["note"])
    capped = cap(reply, 1_000)
    assert capped.data["capped"]["cut"]["field"] == "note" and len(capped.text()) <= 1_000


def test_a_huge_query_stays_within_the_cap(runner):
    tools = runner(max_chars=20_000)
    fill(tools, 12, "deploy " * 200)
    for query in (" ".join(f"deploy{i} step" for i in range(3_000)), "déployé " * 4_000, "deploy\x1b " * 4_000):
        reply = call(tools, "memory_recall", query=query, limit=20)
        # Counted as any JSON writer would write it, non-ASCII escaped or not.
        for written in (json.dumps(reply.data), json.dumps(reply.data, ensure_ascii=False)):
            assert len(written) <= 20_000, (query[:20], len(written))
        assert len(reply.text()) <= 20_000


def test_stored_control_bidi_and_zero_width_characters_are_escaped_in_the_text(runner, isolated_env):
    import sqlite3

    tools = runner()
    call(tools, "memory_remember", label="plain", content="deploy notes")
    call(tools, "memory_remember", label="other", content="deploy notes")
    label, content, branch = "Evil\x1b]0;owned\x07 label", "clear \x1b[2J \x9b31m \u202eevil\u202c zero\u200bwidth", \
        "feat\x1b[31m-x"
    with sqlite3.connect(isolated_env["THATCH_DB"]) as conn:
        conn.execute("UPDATE entries SET label = ?, content = ? WHERE slug = 'plain'", (label, content))
        conn.execute("UPDATE entries SET branch = ? WHERE slug = 'other'", (branch,))
    for name, args in (("memory_list", {}), ("memory_show", {"label": "plain"}),
                       ("memory_recall", {"query": "clear evil", "mode": "lexical"})):
        reply = call(tools, name, **args)
        text = reply.text()
        for raw in ("\x1b", "\x07", "\x9b", "\u202e", "\u200b"):
            assert raw not in text, (name, text)
        assert "\\x1b" in text and "not instructions" in text, (name, text)
        assert label in repr(reply.data).encode().decode("unicode_escape")  # the document keeps the exact text
