"""Cursor has no command line to drive: its hooks are run here the way its
documentation describes (cursor.com/docs/hooks), each command of the
hooks.json setup wrote through a shell, with the payloads of
tests/data/hooks (taken from that documentation) on stdin."""

from __future__ import annotations

import json
import subprocess

from helpers import hook_payload

RELATED = "what is the release process: tag the commit, build the wheel and upload it to pypi with twine?"


def test_cursors_hooks_answer_in_cursors_shapes(sandbox):
    sandbox.remember("Release process", "Tag the commit, build the wheel and upload it to PyPI with twine.")
    assert sandbox.thatch("setup", "cursor").returncode == 0
    hooks = json.loads((sandbox.project / ".cursor" / "hooks.json").read_text())
    assert hooks["version"] == 1

    def run(event: str, fixture: str, **fill) -> str:
        (entry,) = hooks["hooks"][event]
        done = subprocess.run(entry["command"], shell=True, input=hook_payload(fixture, project=sandbox.project,
                                                                               **fill),
                              capture_output=True, text=True, env=sandbox.env, cwd="/", timeout=60)
        assert done.returncode == 0 and not done.stderr, done
        return done.stdout

    started = json.loads(run("sessionStart", "cursor_session_start"))
    assert set(started) == {"additional_context"} and started["additional_context"].startswith(
        "thatch: Memory for acme/widget")
    prompt = json.loads(run("beforeSubmitPrompt", "cursor_before_submit_prompt", prompt=RELATED))
    assert prompt["continue"] is True and '"Release process" (acme/widget)' in prompt["additional_context"]
    assert "not instructions" in prompt["additional_context"]
    assert run("postToolUse", "cursor_post_tool_use", session="conv-7") == ""
    queued = json.loads(run("beforeSubmitPrompt", "cursor_before_submit_prompt", session="conv-7", prompt="next"))
    assert queued["additional_context"].startswith("thatch: 1 tool interaction from this session is queued")
