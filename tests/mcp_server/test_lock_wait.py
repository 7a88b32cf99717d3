"""How long a write waits for another writer's lock has one default
(support/settings.py LOCK_WAIT): every command's, and `thatch mcp`'s without
--lock-wait, on the fast path, the command line and its tool runner alike."""

from __future__ import annotations

import inspect

from thatch_cli.cli import spec
from thatch_cli.mcp import handshake, server
from thatch_cli.storage import opening
from thatch_cli.support import settings


def test_thatch_mcp_without_lock_wait_serves_with_the_one_default(isolated_env, monkeypatch):
    served: dict[str, float] = {}
    monkeypatch.setattr(handshake, "serve", lambda env, *, max_chars, lock_wait: served.update(lock_wait=lock_wait))
    monkeypatch.setattr(settings, "LOCK_WAIT", 3.5)
    assert handshake.main([]) == 0
    assert served == {"lock_wait": 3.5}
    assert handshake.main(["--lock-wait", "0.25"]) == 0
    assert served == {"lock_wait": 0.25}


def test_the_command_line_and_the_tool_runner_default_to_it():
    option = next(p for p in spec.COMMANDS["mcp"]["params"] if p["name"] == "lock_wait")
    assert option["default"] == settings.LOCK_WAIT
    assert inspect.signature(server.ToolRunner).parameters["lock_wait"].default == settings.LOCK_WAIT
    assert opening.LOCK_TIMEOUT_S == settings.LOCK_WAIT
