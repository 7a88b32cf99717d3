"""`thatch buffer-batch` (Claude Code PostToolBatch) and `thatch buffer-tool`
(Cursor postToolUse, Codex PostToolUse): queue the session's tool calls
for memory extraction (ops/extraction.py). Silent, always exit 0.

Payloads as the hosts send them:
  buffer-batch  {"session_id", "tool_calls": [{"tool_name", "tool_input", "tool_use_id", "tool_response"}]}
                (`tool_results` / `tool_result` are read too)
  buffer-tool   {"conversation_id" or "session_id", "tool_name", "tool_input", and the output in the first of
                 tool_output, tool_response, tool_result, result_json, result, output}

thatch's own tools are not queued; a memory_remember or extraction_done
among them empties the session's queue first (the agent is saving).
"""

from __future__ import annotations

import sys

from .agentio import read_payload, respond, session_id

OUTPUT_KEYS = ("tool_output", "tool_response", "tool_result", "result_json", "result", "output")


def queue_calls(env, session: str, calls: list, cwd: str | None = None) -> int:
    """Queue the tool calls (dicts with tool_name, tool_input and an output),
    and note the files they read or edited (relative ones from `cwd`);
    returns how many were queued."""
    from ..ops.extraction import SKIPPED_TOOLS, Queue, interaction, own_tool, touched_file

    drain = False
    items: list[dict] = []
    files: list[dict] = []
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("tool_name"), str):
            continue
        name = call["tool_name"]
        ours, draining = own_tool(name)
        if draining:
            drain, items = True, []  # what came before the save is being saved
        if ours or name.lower() in SKIPPED_TOOLS:
            continue
        output = next((call[key] for key in OUTPUT_KEYS if call.get(key) is not None), "")
        items.append(interaction(name, call.get("tool_input"), output))
        touched = touched_file(name, call.get("tool_input"), cwd)
        if touched is not None:
            files.append(touched)
    if items or drain:
        Queue(env, session).append(items, drain_first=drain, files=files)
    return len(items)


def _queue(env, batch: bool) -> str:
    payload = read_payload(sys.stdin)
    session = session_id(payload)
    if session:
        if not batch:
            calls: list = [payload]
        elif isinstance(payload.get("tool_calls"), list):
            calls = payload["tool_calls"]
        else:
            results = payload.get("tool_results")
            calls = results if isinstance(results, list) else []
        roots = payload.get("workspace_roots")
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else (
            roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None)
        queue_calls(env, session, calls, cwd)
    return ""


def batch_main(argv: list[str]) -> int:
    return respond("", lambda env: _queue(env, batch=True))


def tool_main(argv: list[str]) -> int:
    return respond("", lambda env: _queue(env, batch=False))
