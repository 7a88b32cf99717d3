"""Errors a tool returns name the tool's arguments, never command-line flags
(one message from ops/ and storage/, worded for the front door it reaches)."""

from __future__ import annotations

from thatch_cli.mcp.server import ToolRunner, tool_wording
from thatch_cli.mcp.tools import BY_NAME


def call(runner: ToolRunner, name: str, **args) -> dict:
    reply = runner.call(name, args)
    return reply.data


def test_a_conflict_names_the_tools_arguments(isolated_env):
    runner = ToolRunner({**isolated_env, "THATCH_MODEL": "fake:16", "THATCH_STORE": "acme/widget"}, max_chars=20_000)
    assert "error" not in call(runner, "memory_remember", label="Deploy", content="make deploy")
    again = call(runner, "memory_remember", label="Deploy", content="make deploy now")["error"]["message"]
    assert "overwrite: true" in again and "--" not in again
    assert "error" not in call(runner, "memory_remember", label="Deploy", content="old", overwrite=True, archived=True)
    archived = call(runner, "memory_remember", label="Deploy", content="new", overwrite=True)["error"]["message"]
    assert "archived: true" in archived and "archived: false" in archived and "--" not in archived


def test_flags_become_arguments_only_where_the_tool_has_them():
    remember, recall = BY_NAME["memory_remember"], BY_NAME["memory_recall"]
    assert tool_wording("pass --overwrite to replace it", remember) == "pass overwrite: true to replace it"
    assert tool_wording("pass --store NAME", remember) == "pass store: NAME"
    assert tool_wording("add --store global", recall) == "add store: global"
    assert tool_wording("use --include-archived", recall) == "use includeArchived: true"
    assert tool_wording("use --all-stores", remember) == "use --all-stores"
