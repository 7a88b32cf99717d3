"""The MCP inspector's command line (0.15 and 2.x, clients built on the
TypeScript MCP SDK), which starts `thatch mcp` with only HOME, LOGNAME,
PATH, SHELL, TERM and USER plus the server's configured `env`: the agent
must still see the terminal's database, and share its daemon. The server
is the one `thatch setup claude --global` records in the user's own
~/.claude.json (a project's .mcp.json is the team's and holds no machine's
settings: tests/integrations/test_setup_team.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sandbox import program

from thatch_cli.daemon import runtime

from helpers import wait_until

INSPECTORS = {"0.15.0": ("inspector-0.15.0", "mcp-inspector"), "2.12.0": ("inspector-2.12.0", "mcp-inspector")}


def daemons_of(home) -> list[int]:
    """Every thatch daemon process of this sandbox's user, whatever environment started it."""
    marker = f"HOME={home}".encode()
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read()
            if not any(mark in cmdline for mark in runtime.COMMAND_MARKS):
                continue
            with open(f"/proc/{name}/environ", "rb") as fh:
                if marker in fh.read().split(b"\0"):
                    found.append(int(name))
        except OSError:
            continue
    return sorted(found)


def user_config(sandbox):
    config_dir = sandbox.env.get("CLAUDE_CONFIG_DIR")
    return (Path(config_dir) if config_dir else sandbox.home) / ".claude.json"


def inspect(sandbox, version: str, *args: str) -> dict:
    argv = program(*INSPECTORS[version])
    done = sandbox.run([*argv, "--cli", "--config", str(user_config(sandbox)), "--server", "thatch", *args],
                       env={"MCP_INSPECTOR_SECRET_STORE": "memory"})
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return json.loads(done.stdout[done.stdout.index("{"):])


@pytest.mark.parametrize("version", list(INSPECTORS))
def test_a_stripped_environment_still_reaches_the_terminals_database_and_daemon(sandbox, version, tmp_path):
    # The terminal: its own database and runtime directory, its model from the settings file, the daemon on.
    terminal = {"THATCH_DB": str(tmp_path / "team" / "notes.db"), "THATCH_DAEMON_IDLE": "60"}
    (tmp_path / "team").mkdir()
    sandbox.env.update(terminal)
    for name in ("THATCH_MODEL", "THATCH_DAEMON"):
        sandbox.env.pop(name)
    settings = sandbox.home / ".config" / "thatch" / "config.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text('model = "fake:64"\n')
    sandbox.remember("Staging port", "The staging server listens on port 8443 behind the VPN.")
    started = sandbox.thatch("daemon", "start", "--json")
    assert started.returncode == 0, started
    try:
        assert sandbox.thatch("setup", "claude", "--global").returncode == 0
        recorded = json.loads(user_config(sandbox).read_text())["mcpServers"]["thatch"]["env"]
        assert recorded["THATCH_DB"] == terminal["THATCH_DB"] and recorded["XDG_RUNTIME_DIR"] == str(sandbox.run_dir)
        result = inspect(sandbox, version, "--method", "tools/call", "--tool-name", "memory_recall",
                         "--tool-arg", "query=staging port")
        assert not result.get("isError"), result
        assert [r["label"] for r in result["structuredContent"]["results"]] == ["Staging port"]
        assert "8443" in result["content"][0]["text"]
        # One daemon for this user and model: the server found the terminal's, started none.
        wait_until(lambda: len(daemons_of(sandbox.home)) > 1, timeout=3)
        assert daemons_of(sandbox.home) == [json.loads(started.stdout)["pid"]]
    finally:
        sandbox.thatch("daemon", "stop")
        for pid in daemons_of(sandbox.home):  # one the server may have started elsewhere
            os.kill(pid, 9)
