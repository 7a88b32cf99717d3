"""`thatch mcp` at the protocol level, with raw JSON-RPC lines: every
request gets an answer (malformed JSON, a lone surrogate escape, a line too
long), errors never echo a huge value, SIGINT stops the server, a daemon it
started is never left a zombie, and memory_list pages through a store of
any size."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest

from helpers import daemon_pids, mcp_env, stop_all, wait_until

HANDSHAKE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


class Raw:
    """A `thatch mcp` process spoken to line by line."""

    def __init__(self, env: dict[str, str], cwd=None) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "thatch_cli", "mcp"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.send(HANDSHAKE)
        assert self.reply(1)["result"]["serverInfo"]["name"] == "thatch"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def next(self, timeout: float = 30) -> dict | None:
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        return json.loads(self.process.stdout.readline()) if ready else None

    def reply(self, ident, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.next(deadline - time.monotonic())
            if message is not None and message.get("id") == ident:
                return message
        raise AssertionError(f"no reply to request {ident!r} within {timeout}s")

    def call(self, ident: int, name: str, arguments: dict) -> dict:
        self.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}})
        return self.reply(ident)["result"]

    def close(self) -> str:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=30)
        return self.process.stderr.read().decode()


def test_every_request_gets_an_answer(isolated_env):
    """A lone surrogate escape or malformed JSON used to get no reply at all:
    the client waited forever."""
    server = Raw(mcp_env(THATCH_STORE="acme/widget"))
    try:
        server.send(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_show",'
                    b' "arguments": {"label": "\\ud800"}}}')
        assert server.reply(2, timeout=10)["error"] == {
            "code": -32602, "message": "a string holds a lone surrogate escape (such as \\ud800), which is not"
                                       " Unicode text"}
        server.send(b'{"jsonrpc": "2.0", "id": "\\udc80x", "method": "ping"}')  # even in the id: answered, id null
        assert server.reply(None, timeout=10)["error"]["code"] == -32600
        server.send(b'{"jsonrpc": "2.0", "id": 3, "method": ')
        broken = server.reply(None, timeout=10)
        assert broken["error"]["code"] == -32700 and broken["error"]["message"].startswith("Parse error: ")
        server.send(b'{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "x", "arguments": "'
                    + b"a" * (5 * 1024 * 1024) + b'"}}')
        assert server.reply(None, timeout=30)["error"] == {"code": -32700,
                                                           "message": "Parse error: a message longer than 4 MiB"}
        server.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "store_list"}})
        assert server.reply(5)["result"]["isError"] is False  # still serving
    finally:
        stderr = server.close()
    assert "Traceback" not in stderr


def test_errors_never_echo_a_huge_value(isolated_env):
    """A 90,000-character session_id came back whole in the error."""
    server = Raw(mcp_env(THATCH_STORE="acme/widget"))
    try:
        cases = [("get_extraction_payload", {"session_id": "x" * 90_000}),
                 ("memory_show", {"label": "y" * 90_000}),
                 ("memory_recall", {"query": "q", "limit": "z" * 90_000}),
                 ("memory_show", {"label": "a", "z" * 90_000: 1}),
                 ("z" * 90_000, {})]
        for ident, (name, arguments) in enumerate(cases, start=10):
            result = server.call(ident, name, arguments)
            assert result["isError"] is True
            assert len(json.dumps(result)) < 2_000, (name[:20], len(json.dumps(result)))
        said = server.call(20, "get_extraction_payload", {"session_id": "x" * 90_000})["content"][0]["text"]
        assert said == "error: session_id is 90,000 characters; it must be at most 500"
    finally:
        server.close()


def test_sigint_stops_the_server_while_stdin_stays_open(isolated_env):
    """It used to close stdout and linger until the host closed stdin. (A
    test run from a background job inherits SIGINT ignored, and a server
    keeps a host's choice to ignore it: this host does not.)"""
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        server = Raw(mcp_env(THATCH_STORE="acme/widget"))
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        server.process.send_signal(signal.SIGINT)
        started = time.monotonic()
        server.process.wait(timeout=10)
        assert time.monotonic() - started < 5
        assert "Fatal Python error" not in server.process.stderr.read().decode()
    finally:
        if server.process.poll() is None:
            server.process.kill()


def _zombie_children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[-1].split()
            except OSError:
                continue
            if fields[0] == b"Z" and int(fields[1]) == pid:
                found.append(int(name))
    return found


def test_a_daemon_the_server_started_is_not_left_a_zombie(isolated_env):
    env = mcp_env(THATCH_DAEMON="1", THATCH_DAEMON_IDLE="1", THATCH_STORE="acme/widget")
    server = Raw(env)
    try:
        assert wait_until(lambda: daemon_pids(env), timeout=30)  # started at the handshake, to load the model
        assert wait_until(lambda: not daemon_pids(env), timeout=30)  # idle for a second: it exits
        time.sleep(0.5)
        assert _zombie_children(server.process.pid) == []
        assert server.call(2, "store_list", {})["isError"] is False
    finally:
        server.close()
        stop_all(env)


@pytest.fixture
def crowded(isolated_env):
    """200 memories whose listing is far over the 20,000-character cap."""
    lines = "".join(json.dumps({"label": f"memory number {i} about the deployment pipeline and its steps",
                                "content": f"step {i}"}) + "\n" for i in range(200))
    result = subprocess.run([sys.executable, "-m", "thatch_cli", "import", "-"], input=lines, text=True,
                            capture_output=True, env=mcp_env(THATCH_STORE="acme/widget"), timeout=60)
    assert result.returncode == 0, result.stderr


def test_memory_list_says_how_many_there_are_and_pages_through_them(crowded):
    """It used to return 126 of 200 memories without a word about the rest."""
    server = Raw(mcp_env(THATCH_STORE="acme/widget"))
    try:
        offset, seen, pages = 0, [], []
        while offset is not None:
            result = server.call(len(pages) + 2, "memory_list", {"offset": offset})
            data, text = result["structuredContent"], result["content"][0]["text"]
            assert data["total"] == 200 and data["offset"] == offset and len(text) <= 20_000
            seen += [m["label"] for m in data["memories"]]
            if data.get("next_offset") is not None:
                assert data["next_offset"] == offset + len(data["memories"])
                assert text.startswith(f"thatch: memories {offset + 1}-{data['next_offset']} of 200 in acme/widget")
                assert (f"{200 - data['next_offset']} more: call memory_list with offset {data['next_offset']}"
                        " for the next page.") in text
            pages.append(len(data["memories"]))
            offset = data.get("next_offset")
        assert len(pages) > 1 and len(seen) == len(set(seen)) == 200
        small = server.call(50, "memory_list", {"limit": 5, "offset": 195})["structuredContent"]
        assert len(small["memories"]) == 5 and "next_offset" not in small
    finally:
        server.close()
