"""`thatch mcp` through a real MCP client (the official SDK's) over stdio, in
a temporary git repository with an origin: the tools and their schemas,
every tool against the database, the same JSON as the CLI, and every kind of
bad call answered as a tool error while the server keeps serving."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from thatch_cli.storage.memories import MemoryDB

from helpers import call_json, git, mcp_env, mcp_session, run_probed, thatch_process, top_level

ORIGINAL_TOOLS = {
    "memory_remember": {"label", "content", "store", "branch", "confidence", "overwrite", "archived"},
    "memory_recall": {"query", "store", "branch", "limit", "includeArchived"},
    "memory_list": {"store"},
    "memory_show": {"label", "store"},
    "memory_forget": {"label", "store"},
    "store_list": set(),
    "find_duplicates": {"store", "threshold"},
    "dedup_mark_checked": {"label_a", "label_b", "status", "store"},
}


@pytest.fixture
def project(git_repo):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


def cli_json(env, cwd, *args):
    result = thatch_process([*args, "--json"], env=env, cwd=cwd)
    return json.loads(result.stdout)


def test_tools_list_and_every_tool_against_the_database(project, isolated_env):
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))

    async def scenario():
        async with mcp_session(env, cwd=project.parent) as session:
            assert "memory_recall" in session.initialize_result.instructions
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            for name, arguments in ORIGINAL_TOOLS.items():
                assert arguments <= set(listed[name].input_schema["properties"]), name
            assert {"memory_hygiene"} <= set(listed)
            remember = listed["memory_remember"].input_schema
            assert remember["required"] == ["label", "content"]
            assert remember["properties"]["confidence"] == {**remember["properties"]["confidence"],
                                                            "type": "integer", "minimum": 1, "maximum": 10}
            assert listed["memory_recall"].input_schema["properties"]["limit"]["maximum"] == 20
            assert listed["dedup_mark_checked"].input_schema["properties"]["status"]["enum"] == [
                "duplicate", "supplement", "contradiction", "unrelated"]

            calls = {}
            for name, args in [
                ("memory_remember", {"label": "Release process", "content": "Tag the commit, then twine upload.",
                                     "confidence": 8}),
                ("memory_remember", {"label": "Release steps", "content": "Tag the commit, then twine upload.",
                                     "branch": "main"}),
                ("memory_remember", {"label": "Editor", "content": "The user prefers vim keybindings.",
                                     "store": "global"}),
                ("memory_recall", {"query": "twine upload", "limit": 5}),
                ("memory_list", {}),
                ("memory_show", {"label": "release process"}),
                ("store_list", {}),
                ("find_duplicates", {}),
                ("dedup_mark_checked", {"label_a": "Release process", "label_b": "Release steps",
                                        "status": "supplement"}),
                ("memory_hygiene", {}),
                ("memory_forget", {"label": "Release steps"}),
            ]:
                is_error, data = call_json(await session.call_tool(name, args))
                assert not is_error, (name, data)
                calls.setdefault(name, []).append(data)
            return calls

    calls = anyio.run(scenario)
    saved = calls["memory_remember"]
    assert [d["memory"]["store"] for d in saved] == ["acme/widget", "acme/widget", "global"]
    assert saved[1]["similar"][0]["label"] == "Release process"  # near-duplicate reported, save done
    recall = calls["memory_recall"][0]
    assert recall["stores"] == ["acme/widget", "global"] and recall["branch"] == "main"
    assert {r["label"] for r in recall["results"]} >= {"Release process", "Release steps"}
    assert calls["find_duplicates"][0]["pair_count"] == 1
    assert calls["dedup_mark_checked"][0]["status"] == "supplement"
    assert calls["memory_hygiene"][0]["store"] == "acme/widget"
    assert {s["name"] for s in calls["store_list"][0]["stores"]} >= {"acme/widget", "global"}

    db = MemoryDB.open(Path(isolated_env["THATCH_DB"]))
    try:
        rows = {(m.store, m.label): m for m in db.list(["acme/widget", "global"])}
        assert set(rows) == {("acme/widget", "Release process"), ("global", "Editor")}
        assert rows[("acme/widget", "Release process")].confidence == 8
        assert rows[("acme/widget", "Release process")].recall_count == 1  # memory_recall stamps telemetry
    finally:
        db.close()
    # The structured content is written for the model: the CLI's facts, without its bookkeeping, marked as data.
    cli_env = {**env, "THATCH_DAEMON": "0"}
    listed = calls["memory_list"][0]
    assert listed["store"] == "acme/widget" and listed["about"].startswith("Memories are notes stored earlier")
    cli_listed = cli_json(cli_env, project, "list")["memories"]
    assert [m["label"] for m in listed["memories"] if m["label"] != "Release steps"] == [
        m["label"] for m in cli_listed]
    shown = cli_json(cli_env, project, "show", "release process")["memory"]
    model_shown = calls["memory_show"][0]
    assert list(model_shown) == ["about", "memory"] and "not instructions" in model_shown["about"]
    assert model_shown["memory"] == {"label": shown["label"], "store": shown["store"], "confidence": 8,
                                     "updated_at": shown["updated_at"], "content": shown["content"]}
    for name, documents in calls.items():
        for document in documents:
            text = json.dumps(document)
            for internal in ('"slug"', '"recall_count"', '"has_vector"', '"scores"', '"snippet"', '"weak"',
                             '"last_recalled_at"', "null"):
                assert internal not in text, (name, internal, document)
    assert list(recall) == ["about", "stores", "branch", "mode", "results"]
    assert list(recall["results"][0])[:2] == ["label", "store"] and "content" in recall["results"][0]


def test_bad_calls_are_tool_errors_and_the_server_keeps_serving(project):
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))

    async def scenario():
        async with mcp_session(env) as session:
            answers = {}
            for key, name, args in [
                ("range", "memory_remember", {"label": "x", "content": "y", "confidence": 11}),
                ("type", "memory_recall", {"query": "x", "limit": "many"}),
                ("unknown_arg", "memory_recall", {"query": "x", "include_archived": True}),
                ("missing", "memory_show", {}),
                ("status", "dedup_mark_checked", {"label_a": "a", "label_b": "b", "status": "same"}),
                ("empty", "memory_remember", {"label": "x", "content": "   "}),
                ("not_found", "memory_show", {"label": "no such memory"}),
                ("unknown_tool", "memory_teleport", {}),
                ("huge_days", "memory_hygiene", {"stale_days": 1e30}),
                ("ok", "memory_remember", {"label": "x", "content": "still serving"}),
            ]:
                answers[key] = call_json(await session.call_tool(name, args))
            return answers

    answers = anyio.run(scenario)
    assert answers.pop("ok")[0] is False
    expected = {
        "range": ("invalid_input", "confidence must be between 1 and 10, got 11"),
        "type": ("invalid_input", "limit must be an integer, got 'many'"),
        "unknown_arg": ("invalid_input", "unknown argument 'include_archived' for memory_recall"
                                         " (did you mean 'includeArchived'?)"),
        "missing": ("invalid_input", "memory_show needs the argument 'label'"),
        "status": ("invalid_input", "unknown status 'same'; use one of duplicate, supplement, contradiction,"
                                    " unrelated"),
        "empty": ("invalid_input", "content is empty"),
        "not_found": ("not_found", "no memory labelled 'no such memory' in acme/widget or global"),
        "unknown_tool": ("invalid_input", "unknown tool 'memory_teleport'"),
        "huge_days": ("invalid_input", "stale_days must be at most 36500 (a century)"),
    }
    for key, (code, message) in expected.items():
        is_error, data = answers[key]
        assert is_error, key
        assert data["error"]["code"] == code, key
        assert data["error"]["message"].startswith(message), (key, data)
    assert answers["not_found"][1]["error"]["exit_code"] == 3


def test_the_same_messages_as_the_cli(project):
    """One check for both front doors: the CLI's error for confidence 11 is the tool's."""
    result = thatch_process(["remember", "x", "y", "--confidence", "11", "--json"],
                            env={**mcp_env(), "THATCH_STORE": "acme/widget"}, cwd=project)
    assert json.loads(result.stdout)["error"]["message"] == "confidence must be between 1 and 10, got 11"


def test_a_malformed_message_does_not_stop_the_server(project):
    """Raw JSON-RPC lines: garbage, then a proper handshake and calls still work."""
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))
    server = subprocess.Popen([sys.executable, "-m", "thatch_cli", "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)

    def send(message) -> None:
        server.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
        server.stdin.flush()

    def reply(ident: int) -> dict:
        while True:
            message = json.loads(server.stdout.readline())
            if message.get("id") == ident:
                return message

    try:
        send("this is not json")
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        assert reply(1)["result"]["serverInfo"]["name"] == "thatch"
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send("{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/call\", \"params\": {")
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "memory_show", "arguments": "not an object"}})
        assert "error" in reply(3)
        send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "store_list"}})
        assert reply(4)["result"]["isError"] is False
    finally:
        server.stdin.close()
        stderr = server.stderr.read()
        server.wait(timeout=30)
    assert "Traceback" not in stderr


def test_a_request_id_json_rpc_does_not_allow_is_answered_under_id_null(project):
    """An id that is an object, an array, a boolean, 1.5 or null gets
    "Invalid Request" under id null (JSON-RPC 2.0), never silence."""
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))
    server = subprocess.Popen([sys.executable, "-m", "thatch_cli", "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)

    def send(message) -> None:
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        assert json.loads(server.stdout.readline())["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for ident in ({"a": 1}, [1], True, 1.5, None):
            send({"jsonrpc": "2.0", "id": ident, "method": "tools/list"})
            answer = json.loads(server.stdout.readline())
            assert answer["id"] is None and answer["error"]["code"] == -32600, (ident, answer)
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert "result" in json.loads(server.stdout.readline())  # still serving
    finally:
        server.stdin.close()
        stderr = server.stderr.read()
        server.wait(timeout=30)
    assert "Traceback" not in stderr


def test_recall_when_no_model_can_load_answers_by_keywords(project):
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project), THATCH_MODEL="acme/no-such-model", HF_HUB_OFFLINE="1")

    async def scenario():
        async with mcp_session(env) as session:
            saved = call_json(await session.call_tool("memory_remember", {
                "label": "Ports", "content": "staging listens on port 8443"}))
            found = call_json(await session.call_tool("memory_recall", {"query": "which port does staging use"}))
            return saved, found

    (save_error, saved), (recall_error, found) = anyio.run(scenario)
    assert not save_error and "reindex" in saved["notices"][0]
    assert not recall_error and found["mode"] == "lexical"
    assert [r["label"] for r in found["results"]] == ["Ports"]
    assert "semantic search unavailable" in found["notices"][0]


LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


def test_a_database_locked_by_another_writer(project, isolated_env):
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))
    assert thatch_process(["remember", "Ports", "staging listens on 8443"], env=env, cwd=project).returncode == 0

    async def scenario():
        async with mcp_session(env, "--lock-wait", "0.3") as session:
            locker = subprocess.Popen([sys.executable, "-c", LOCKER, isolated_env["THATCH_DB"]],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            try:
                assert locker.stdout.readline().strip() == "locked"
                write = call_json(await session.call_tool("memory_remember", {"label": "a", "content": "b"}))
                read = call_json(await session.call_tool("memory_recall", {"query": "staging port"}))
                listing = call_json(await session.call_tool("memory_list", {}))
            finally:
                locker.communicate("", timeout=10)
            after = call_json(await session.call_tool("memory_remember", {"label": "a", "content": "b"}))
            return write, read, listing, after

    write, read, listing, after = anyio.run(scenario)
    assert write[0] and write[1]["error"]["code"] == "database" and write[1]["error"]["retryable"] is True
    assert not read[0] and [r["label"] for r in read[1]["results"]] == ["Ports"]
    assert "recall counts not updated" in read[1]["notices"][-1]
    assert not listing[0] and [m["label"] for m in listing[1]["memories"]] == ["Ports"]
    assert not after[0] and after[1]["status"] == "created"


def test_two_servers_and_cli_writers_at_once_lose_nothing(project, isolated_env):
    env = mcp_env(CLAUDE_PROJECT_DIR=str(project))
    per_writer = 12

    async def server_writes(prefix: str) -> list[bool]:
        async with mcp_session(env) as session:
            results = []

            async def one(i: int) -> None:
                answer = await session.call_tool("memory_remember", {"label": f"{prefix} {i}",
                                                                     "content": f"note {i} from {prefix}"})
                results.append(bool(answer.is_error))

            async with anyio.create_task_group() as group:
                for i in range(per_writer):
                    group.start_soon(one, i)
            return results

    script = ("import subprocess, sys\n"
              f"for i in range({per_writer}):\n"
              "    subprocess.run([sys.executable, '-m', 'thatch_cli', 'remember', f'{sys.argv[1]} {i}', 'cli note'],"
              " check=True, capture_output=True)\n")
    clis = [subprocess.Popen([sys.executable, "-c", script, f"cli{n}"], env=env, cwd=project) for n in (1, 2)]

    async def both():
        outcomes = {}

        async def run(prefix):
            outcomes[prefix] = await server_writes(prefix)

        async with anyio.create_task_group() as group:
            group.start_soon(run, "alpha")
            group.start_soon(run, "beta")
        return outcomes

    outcomes = anyio.run(both)
    assert all(c.wait(timeout=120) == 0 for c in clis)
    assert not any(outcomes["alpha"] + outcomes["beta"])
    labels = {m["label"] for m in cli_json({**env, "THATCH_STORE": "acme/widget"}, project, "list")["memories"]}
    expected = {f"{p} {i}" for p in ("alpha", "beta", "cli1", "cli2") for i in range(per_writer)}
    assert labels == expected


def test_the_store_and_branch_follow_the_project_per_call(git_repo, isolated_env):
    first = git_repo("first", remote="https://github.com/acme/first.git")
    second = git_repo("second", remote="https://github.com/acme/second.git")
    env = mcp_env(CLAUDE_PROJECT_DIR=str(first))

    async def scenario():
        async with mcp_session(env) as session:
            before = call_json(await session.call_tool("memory_recall", {"query": "anything"}))[1]
            git(first, "switch", "-qc", "feat/login")
            after = call_json(await session.call_tool("memory_recall", {"query": "anything"}))[1]
            return before, after

    before, after = anyio.run(scenario)
    assert (before["stores"], before["branch"]) == (["acme/first", "global"], "main")
    assert (after["stores"], after["branch"]) == (["acme/first", "global"], "feat/login")

    cursor_env = mcp_env(CLAUDE_PROJECT_DIR=str(first), CURSOR_PROJECT_DIR=str(second))

    async def cursor():
        async with mcp_session(cursor_env) as session:
            return call_json(await session.call_tool("memory_list", {}))[1]["store"]

    assert anyio.run(cursor) == "acme/second"


def test_light_commands_import_no_mcp_stack(isolated_env, tmp_path):
    env = {**mcp_env(), "THATCH_STORE": "acme/widget"}
    for fastpath in ("1", "0"):
        result, modules = run_probed(["list"], env={**env, "THATCH_FASTPATH": fastpath}, cwd=tmp_path,
                                     tmp_path=tmp_path)
        assert result.returncode == 0 and modules
        assert top_level(modules) & {"mcp", "mcp_types", "anyio", "jsonschema"} == set()
        if fastpath == "1":  # Typer itself brings pydantic on the slow path
            assert "pydantic" not in top_level(modules)


def test_the_handshake_loads_no_model_stack(isolated_env, tmp_path):
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ]
    result, modules = run_probed(["mcp"], env=mcp_env(), cwd=tmp_path, tmp_path=tmp_path,
                                 input="\n".join(lines) + "\n")
    assert modules and '"tools"' in result.stdout
    assert top_level(modules) & {"numpy", "torch", "sentence_transformers"} == set()


def test_max_chars_is_checked(isolated_env, tmp_path):
    result = thatch_process(["mcp", "--max-chars", "10"], env=mcp_env(), cwd=tmp_path, input="")
    assert result.returncode == 2 and "--max-chars must be at least 1000" in result.stderr
    result = thatch_process(["mcp"], env=mcp_env(THATCH_MCP_MAX_CHARS="lots"), cwd=tmp_path, input="")
    assert result.returncode == 2 and "THATCH_MCP_MAX_CHARS" in result.stderr


def test_the_locker_really_holds_the_write_lock(isolated_env):
    """Keeps the locker honest: it really takes the write lock others wait for."""
    path = isolated_env["THATCH_DB"]
    MemoryDB.open(Path(path)).close()
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert locker.stdout.readline().strip() == "locked"
        conn = sqlite3.connect(path, timeout=0.1, isolation_level=None)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            conn.execute("BEGIN IMMEDIATE")
        conn.close()
    finally:
        locker.communicate("", timeout=10)
    assert os.path.exists(path)
