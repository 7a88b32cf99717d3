"""Pinned memories: `thatch pin` / `unpin`, `remember --pin`; listed first,
always in the session-start reminder, marked in recall, and carried by
--json, the MCP tools, export/import and the history."""

from __future__ import annotations

import itertools
import json
import os
import re
import sqlite3
from datetime import timedelta

import anyio
import pytest

from helpers import (
    FIXED_NOW,
    ORIGINAL_SCHEMA,
    ORIGINAL_UPSERT,
    call_json,
    hook,
    hook_payload,
    mcp_env,
    mcp_session,
    thatch_process,
    thatch_pty,
)

ENV = {"THATCH_MODEL": "fake:64", "THATCH_STORE": "acme/widget"}


def brief(result) -> dict:
    return result.json()["memory"]


@pytest.fixture
def saved(cli):
    """`thatch` in-process, a second later on each call; three memories saved, the oldest first."""
    seconds = itertools.count()

    def later(*args, **options):
        moment = FIXED_NOW + timedelta(seconds=next(seconds))
        return cli(*args, clock=lambda: moment, **options)

    for label, text in (("Old notes", "Nothing much."),
                        ("Release process", "Tag, build the wheel, twine upload."),
                        ("Staging port", "Staging listens on 5433.")):
        assert later("remember", label, text, **ENV).exit_code == 0
    return later


def test_pin_and_unpin_are_flags_that_do_nothing_twice(saved):
    cli = saved
    first = cli("pin", "Staging port", "--json", **ENV).json()
    assert first["changed"] and first["memory"]["pinned"] is True
    assert cli("pin", "staging-port", "--json", **ENV).json()["changed"] is False
    assert "already pinned" in cli("pin", "Staging port", **ENV).stdout
    assert cli("show", "Staging port", "--json", **ENV).json()["memory"]["pinned"] is True
    assert "pinned" in cli("show", "Staging port", **ENV).stdout.splitlines()[-1]
    assert cli("unpin", "Staging port", "--json", **ENV).json()["changed"] is True
    assert cli("show", "Staging port", "--json", **ENV).json()["memory"]["pinned"] is False
    missing = cli("pin", "Nope", **ENV)
    assert missing.exit_code == 3 and missing.stderr.startswith("thatch: error: no memory labelled 'Nope'")


def test_remember_pin_and_a_save_without_it_keeps_the_pin(saved):
    cli = saved
    created = cli("remember", "--pin", "Handoff", "Next: drop the old table.", "--json", **ENV).json()
    assert created["status"] == "created" and created["memory"]["pinned"] is True
    again = cli("remember", "--pin", "Handoff", "Next: drop the old table.", "--json", **ENV).json()
    assert again["status"] == "unchanged"
    replaced = cli("remember", "Handoff", "Next: done.", "--overwrite", "--json", **ENV).json()
    assert replaced["status"] == "replaced" and replaced["memory"]["pinned"] is True
    plain = cli("remember", "Fresh", "no pin", "--json", **ENV).json()
    assert plain["memory"]["pinned"] is False


def test_pinned_come_first_in_list_and_are_marked_in_recall(saved, tmp_path):
    cli = saved
    cli("pin", "Old notes", **ENV)
    listed = [m["label"] for m in cli("list", "--json", **ENV).json()["memories"]]
    assert listed == ["Old notes", "Staging port", "Release process"]  # pinned, then newest first
    assert cli("list", **ENV).stdout.splitlines()[0].startswith("Old notes\t")
    found = cli("recall", "old notes", "--mode", "lexical", "--json", **ENV).json()["results"]
    assert found[0]["label"] == "Old notes" and found[0]["pinned"] is True
    env = {**os.environ, **ENV, "TERM": "xterm"}
    code, screen = thatch_pty(["recall", "old notes", "--mode", "lexical"], env=env, cwd=tmp_path, cols=200)
    assert code == 0 and "Old notes (pinned)" in re.sub(r"\x1b\[[0-9;]*m", "", screen)  # the table, styles dropped


def test_the_session_start_reminder_always_holds_the_pinned(saved, isolated_env, tmp_path):
    cli = saved
    cli("remember", "--pin", "--global", "Python style", "Black, line length 100.", **ENV)
    cli("pin", "Staging port", **ENV)
    cli("pin", "Release process", **ENV)  # pinned last, but Staging port is the newer memory
    env = {**os.environ, **ENV}
    text = hook(["reminder"], hook_payload("claude_session_start", project=tmp_path), env=env, cwd=tmp_path).stdout
    lines = text.splitlines()
    pinned = lines[lines.index("Pinned (read these first):") + 1:][:3]
    assert pinned == ['- "Staging port": Staging listens on 5433.',
                      '- "Release process": Tag, build the wheel, twine upload.',
                      '- "Python style" (global): Black, line length 100.']
    # Room for the head, the data note and one pinned memory: the others are counted.
    short = hook(["reminder", "--max-chars", "330"], "{}", env=env, cwd=tmp_path).stdout
    assert len(short.rstrip("\n")) <= 330
    assert '- "Staging port": Staging listens on 5433.' in short and "more pinned: memory_list" in short


def test_export_import_and_history_carry_the_pin(saved, isolated_env, tmp_path):
    cli = saved
    cli("pin", "Release process", **ENV)
    exported = [json.loads(line) for line in cli("export", **ENV).stdout.splitlines()]
    rows = {r["label"]: r for r in exported if "_record" not in r}
    assert rows["Release process"]["pinned"] == 1 and rows["Staging port"]["pinned"] == 0
    assert any(r.get("_record") == "version" and r["pinned"] == 0 for r in exported)  # before the pin

    other = {**ENV, "THATCH_DB": str(tmp_path / "other.db")}
    lines = "\n".join(json.dumps(r) for r in exported) + "\n"
    assert cli("import", "-", "--json", input=lines, **other).json()["created"] == 3
    assert cli("show", "Release process", "--json", **other).json()["memory"]["pinned"] is True
    bad = json.dumps({"label": "X", "content": "# X\n\ny", "pinned": "yes"}) + "\n"
    rejected = cli("import", "-", "--json", input=bad, **other)
    assert rejected.exit_code == 5 and "'pinned' must be 0, 1, true or false" in rejected.stdout

    history = cli("history", "Release process", "--json", **ENV).json()
    assert history["versions"][0]["changes"] == ["pinned"]
    cli("unpin", "Release process", **ENV)
    assert cli("history", "Release process", "--json", **ENV).json()["versions"][0]["changes"] == ["unpinned"]
    restored = cli("restore-memory", "Release process", "--json", **ENV).json()
    assert restored["memory"]["pinned"] is True  # the version before the unpin


def test_agents_pin_remember_and_list_through_mcp(isolated_env, tmp_path):
    env = mcp_env(THATCH_STORE="acme/widget")

    async def scenario():
        async with mcp_session(env, cwd=tmp_path) as session:
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert listed["memory_pin"].input_schema["required"] == ["label"]
            assert "pin" in listed["memory_remember"].input_schema["properties"]
            _, saved = call_json(await session.call_tool("memory_remember", {
                "label": "Handoff", "content": "Next: drop the old table.", "pin": True}))
            assert saved["memory"]["pinned"] is True
            await session.call_tool("memory_remember", {"label": "Other", "content": "later"})
            error, pinned = call_json(await session.call_tool("memory_pin", {"label": "Other"}))
            assert not error and pinned == {"memory": {**pinned["memory"], "pinned": True}, "changed": True}
            result = await session.call_tool("memory_pin", {"label": "Handoff", "pinned": False})
            assert "'Handoff' in acme/widget is not pinned." in result.content[0].text
            result = await session.call_tool("memory_list", {})
            memories = result.structured_content["memories"]
            # The model reads flags only when set (mcp/views.py).
            assert [(m["label"], m.get("pinned", False)) for m in memories] == [("Other", True), ("Handoff", False)]
            assert "- 'Other' (pinned, updated" in result.content[0].text
            found = await session.call_tool("memory_recall", {"query": "later", "mode": "lexical"})
            assert "acme/widget · pinned" in found.content[0].text
            # The filter's argument comes from the field's declaration (memory/fields.py `filter`).
            for tool in ("memory_recall", "memory_list"):
                assert listed[tool].input_schema["properties"]["pinned"]["type"] == "boolean"
            only = await session.call_tool("memory_list", {"pinned": True})
            assert [m["label"] for m in only.structured_content["memories"]] == ["Other"]
            found = await session.call_tool("memory_recall", {"query": "later drop table", "mode": "lexical",
                                                              "pinned": True})
            assert [r["label"] for r in found.structured_content["results"]] == ["Other"]

    anyio.run(scenario)
    cli = thatch_process(["list", "--json"], env={**os.environ, **ENV}, cwd=tmp_path)
    assert [m["label"] for m in json.loads(cli.stdout)["memories"]] == ["Other", "Handoff"]


def test_a_pin_is_an_added_column_the_originals_sql_leaves_alone(tmp_path):
    """thatch's `pinned` column comes after the original's, which keep their
    order; the original names the columns it reads, overwrites with an
    upsert (an UPDATE, so the pin stays) and forgets by deleting the row."""
    from thatch_cli.memory.records import Memory
    from thatch_cli.storage import maintenance
    from thatch_cli.storage.memories import MemoryDB

    path = tmp_path / "thatch.db"
    conn = sqlite3.connect(path)
    conn.executescript(ORIGINAL_SCHEMA + "INSERT INTO stores (name) VALUES ('acme/widget');")
    original_columns = [row[1] for row in conn.execute("PRAGMA table_info(entries)")]
    conn.close()
    store = MemoryDB.open(path)
    store.save(Memory(store="acme/widget", slug="deploy", label="Deploy", content="# Deploy\n\nmake deploy",
                      created_at="2026-01-01T00:00:00.000Z", updated_at="2026-01-01T00:00:00.000Z"),
               overwrite=False, archived=None)
    maintenance.set_value(store, "acme/widget", "deploy", "pinned", True)
    store.close()

    conn = sqlite3.connect(path)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(entries)")]
    assert columns[:len(original_columns)] == original_columns and "pinned" in columns[len(original_columns):]
    listed = conn.execute("SELECT slug, label, branch, confidence, archived, updated_at FROM entries"
                          " WHERE store = ? ORDER BY label", ("acme/widget",)).fetchall()
    assert listed == [("deploy", "Deploy", None, None, 0, "2026-01-01T00:00:00.000Z")]
    # The original's overwrite, and its recall stamp.
    conn.execute(
        ORIGINAL_UPSERT,
        ("deploy", "acme/widget", "Deploy", "# Deploy\n\nmake ship", bytes(1536), "Xenova/bge-small-en-v1.5", None, 7,
         0, "2026-02-01T00:00:00Z", "2026-02-01T00:00:00Z", None))
    conn.execute("UPDATE entries SET recall_count = recall_count + 1, last_recalled_at = ?"
                 " WHERE (store, slug) IN (VALUES (?, ?))", ("2026-02-02T00:00:00Z", "acme/widget", "deploy"))
    conn.commit()
    store = MemoryDB.open(path)
    memory = store.get("acme/widget", "deploy")
    assert memory.pinned and memory.body == "make ship" and memory.confidence == 7 and memory.recall_count == 1
    store.close()
    # The original's forget, then its save of the same label: a new memory, not pinned.
    conn.execute("DELETE FROM entries WHERE slug = ? AND store = ?", ("deploy", "acme/widget"))
    conn.execute("INSERT INTO entries (slug, store, label, content, embedding, model, branch, confidence, archived,"
                 " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 ("deploy", "acme/widget", "Deploy", "# Deploy\n\nagain", None, None, None, None, 0,
                  "2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z"))
    conn.commit()
    conn.close()
    assert MemoryDB.open(path).get("acme/widget", "deploy").pinned is False


def test_a_pin_is_personal_and_not_shared_by_sync():
    from thatch_cli.memory import fields

    assert not fields.BY_NAME["pinned"].synced


@pytest.mark.parametrize("cols", [80, 60])
def test_a_narrow_list_cuts_the_snippet_and_keeps_the_marker(cli, isolated_env, tmp_path, cols):
    label = "Deploying the staging cluster by hand"
    cli("remember", "--pin", label, "Run the playbook with the staging inventory, then watch the rollout "
        "until every pod is ready and the smoke tests pass on the canary.", **ENV)
    env = {**{k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}, **ENV, "TERM": "xterm",
           "NO_COLOR": "1"}
    code, screen = thatch_pty(["list"], env=env, cwd=tmp_path, cols=cols)
    row = next(line for line in screen.splitlines() if line.startswith("Deploying"))
    assert code == 0 and "(pinned)" in row and len(row) <= cols, screen


def test_list_and_recall_keep_only_pinned_memories_when_asked(saved):
    """--pinned comes from the field's declaration (memory/fields.py `filter`),
    the same value through list (SQL) and recall (the ranking)."""
    cli = saved
    assert cli("pin", "Release process", **ENV).exit_code == 0
    listed = cli("list", "--pinned", "--json", **ENV).json()
    assert [m["label"] for m in listed["memories"]] == ["Release process"] and listed["total"] == 1
    assert len(cli("list", "--json", **ENV).json()["memories"]) == 3
    found = cli("recall", "staging release wheel", "--pinned", "--floor", "0", "--json", **ENV).json()
    assert [r["label"] for r in found["results"]] == ["Release process"]
    assert cli("unpin", "Release process", **ENV).exit_code == 0
    empty = cli("list", "--pinned", **ENV)
    assert empty.exit_code == 0 and "that match the filters" in empty.stderr
