"""Tags: `remember --tag`, `thatch tag` / `untag`, `list --tag` and `recall
--tag` (every tag given must match, the daemon's path too), `tags` in --json,
in MCP, export/import and the history, completion of existing tags, and a
column the original thatch ignores and keeps. Sync: tests/sync/test_tags.py."""

from __future__ import annotations

import json
import os
import sqlite3

import anyio
import pytest

from helpers import ORIGINAL_SCHEMA, ORIGINAL_UPSERT, call_json, mcp_env, mcp_session, stop_all, thatch_process

ENV = {"THATCH_MODEL": "fake:64", "THATCH_STORE": "acme/widget"}


def run(*args: str, input: str | None = None, **extra: str):
    return thatch_process(list(args), env={**os.environ, **ENV, **extra}, input=input)


def ok(*args: str, **extra: str) -> dict:
    done = run(*args, "--json", **extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def labels(data: dict) -> list[str]:
    return sorted(m["label"] for m in data.get("memories", data.get("results", [])))


@pytest.fixture
def tagged(isolated_env):
    ok("remember", "Deploy steps", "ship it with the release workflow", "--tag", "Needs Review", "--tag", "ci")
    ok("remember", "Lint rules", "ruff runs in ci before the release", "--tag", "ci")
    ok("remember", "Editor", "vim keybindings in the editor")


@pytest.mark.usefixtures("tagged")
def test_tags_are_set_normalised_and_changed_twice_for_nothing():
    assert ok("show", "Deploy steps")["memory"]["tags"] == ["ci", "needs-review"]
    assert ok("show", "Editor")["memory"]["tags"] == []
    first = ok("tag", "Editor", "Tools", "vim")
    assert first["changed"] and first["memory"]["tags"] == ["tools", "vim"]
    assert ok("tag", "editor", "VIM")["changed"] is False
    assert "Unchanged: 'Editor' in acme/widget has tools, vim" in run("tag", "Editor", "vim").stdout
    assert ok("untag", "Editor", "tools")["memory"]["tags"] == ["vim"]
    assert ok("untag", "Editor", "tools")["changed"] is False
    assert "tags: vim" in run("show", "Editor").stdout
    # Saved again without --tag, a memory keeps its tags; with --tag, they are replaced.
    ok("remember", "Editor", "vim and tmux", "--overwrite")
    assert ok("show", "Editor")["memory"]["tags"] == ["vim"]
    ok("remember", "Editor", "vim and tmux", "--overwrite", "--tag", "terminal")
    versions = ok("history", "Editor")["versions"]
    assert versions[0]["changes"] == ["tags"] and versions[0]["memory"]["tags"] == ["vim"]


@pytest.mark.parametrize("bad, says", [("a,b", "holds ','"), ("a\u200bb", "a\\u200bb"), ("x" * 51, "limit is 50"),
                                       ("   ", "tag is empty")])
@pytest.mark.usefixtures("tagged")
def test_a_bad_tag_is_one_line_and_exit_2_and_changes_nothing(bad, says):
    for args in (("tag", "Editor", bad), ("remember", "New", "text", "--tag", bad), ("list", "--tag", bad)):
        done = run(*args)
        assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1, args
        assert "\u200b" not in done.stderr
        error = json.loads(run(*args, "--json").stdout)["error"]
        assert error["exit_code"] == 2 and says in error["message"]
    assert labels(ok("list")) == ["Deploy steps", "Editor", "Lint rules"]
    assert ok("show", "Editor")["memory"]["tags"] == []


@pytest.mark.usefixtures("tagged")
@pytest.mark.parametrize("daemon", ["0", "1"])
def test_list_and_recall_keep_memories_with_every_tag_given(daemon):
    env = {"THATCH_DAEMON": daemon}
    try:
        assert labels(ok("list", "--tag", "ci", **env)) == ["Deploy steps", "Lint rules"]
        assert labels(ok("list", "--tag", "CI", "--tag", "needs-review", **env)) == ["Deploy steps"]
        assert labels(ok("list", "--tag", "nope", **env)) == []
        for mode in ("hybrid", "semantic", "lexical"):
            found = ok("recall", "release ci", "--tag", "ci", "--floor", "0", "--mode", mode, **env)
            assert labels(found) == ["Deploy steps", "Lint rules"], mode
            found = ok("recall", "release ci", "--tag", "ci", "--tag", "needs-review", "--floor", "0", "--mode", mode,
                       **env)
            assert labels(found) == ["Deploy steps"], mode
        # A tag added after the daemon cached the store is seen at once.
        ok("tag", "Editor", "ci", **env)
        found = ok("recall", "vim editor keybindings", "--tag", "ci", "--floor", "0", "--mode", "semantic", **env)
        assert "Editor" in labels(found)
    finally:
        stop_all({**os.environ, **ENV, **env})


def test_tags_through_the_mcp_tools(isolated_env, tmp_path):
    env = mcp_env(THATCH_STORE="acme/widget")

    async def scenario():
        async with mcp_session(env, cwd=tmp_path) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert tools["memory_remember"].input_schema["properties"]["tags"]["type"] == "array"
            for name in ("memory_recall", "memory_list"):
                assert tools[name].input_schema["properties"]["tags"]["items"]["type"] == "string"
            error, saved = call_json(await session.call_tool("memory_remember", {
                "label": "Deploy steps", "content": "ship it with the release workflow", "tags": ["CI", "release"]}))
            assert not error and saved["memory"]["tags"] == ["ci", "release"]
            await session.call_tool("memory_remember", {"label": "Editor", "content": "vim keybindings"})
            listed = await session.call_tool("memory_list", {"tags": ["ci"]})
            assert [m["label"] for m in listed.structured_content["memories"]] == ["Deploy steps"]
            assert listed.structured_content["memories"][0]["tags"] == ["ci", "release"]
            assert "tags: ci, release" in listed.content[0].text
            found = await session.call_tool("memory_recall", {"query": "ship vim", "mode": "lexical",
                                                              "tags": ["release"]})
            assert [r["label"] for r in found.structured_content["results"]] == ["Deploy steps"]
            bad = await session.call_tool("memory_remember", {"label": "Bad", "content": "x", "tags": ["a,b"]})
            assert bad.is_error and "holds ','" in bad.content[0].text

    anyio.run(scenario)
    assert labels(ok("list")) == ["Deploy steps", "Editor"]


@pytest.mark.usefixtures("tagged")
def test_tags_travel_through_export_and_import(tmp_path):
    exported = run("export").stdout
    lines = [json.loads(line) for line in exported.splitlines()]
    assert [m["tags"] for m in lines if m.get("label") == "Deploy steps"] == [["ci", "needs-review"]]
    other = {"THATCH_DB": str(tmp_path / "other.db")}
    assert run("import", "-", input=exported, **other).returncode == 0
    assert labels(ok("list", "--tag", "ci", **other)) == ["Deploy steps", "Lint rules"]
    bad = json.dumps({"label": "Bad", "content": "# Bad\n\nx", "tags": ["a\u200bb"]}) + "\n"
    done = run("import", "-", input=bad, **other)
    assert done.returncode == 5 and "holds ','" in done.stdout + done.stderr


@pytest.mark.usefixtures("tagged")
def test_completion_offers_existing_tags():
    assert run("_complete", "tags").stdout.split() == ["ci", "needs-review"]
    # The script asks `thatch _complete tags` for --tag's value and for tag/untag's TAG arguments.
    script = run("completion", "show", "bash").stdout
    assert "'list|--tag'|'recall|--tag'|'remember|--tag') _thatch_r=tags" in script
    assert "'tag|1'|'untag|1') _thatch_r=tags" in script


def test_tags_are_a_column_the_originals_sql_leaves_alone(tmp_path):
    """The original names the columns it writes and overwrites with an upsert
    (an UPDATE), so a memory's tags stay."""
    path = tmp_path / "thatch.db"
    conn = sqlite3.connect(path)
    conn.executescript(ORIGINAL_SCHEMA + "INSERT INTO stores (name) VALUES ('acme/widget');")
    original = [row[1] for row in conn.execute("PRAGMA table_info(entries)")]
    conn.close()
    env = {"THATCH_DB": str(path)}
    ok("remember", "Deploy", "make deploy", "--tag", "ci", **env)
    conn = sqlite3.connect(path)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(entries)")]
    assert columns[:len(original)] == original and "tags" in columns[len(original):]
    conn.execute(
        ORIGINAL_UPSERT,
        ("deploy", "acme/widget", "Deploy", "# Deploy\n\nmake ship", None, None, None, 7, 0,
         "2026-02-01T00:00:00Z", "2026-02-01T00:00:00Z", None))
    conn.commit()
    conn.close()
    shown = ok("show", "Deploy", **env)["memory"]
    assert shown["tags"] == ["ci"] and shown["content"] == "make ship"
    assert labels(ok("list", "--tag", "ci", **env)) == ["Deploy"]
