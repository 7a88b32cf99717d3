"""The host's handshake answered before the SDK is imported.

Importing the MCP SDK takes most of a second on an idle machine (its
pydantic models are built at import) and several under load, and a host
sends its first model request when its servers have answered or after a
short wait: a one-shot `claude -p` went without thatch's tools. So `thatch
mcp` imports the SDK in a thread while this module answers, from the
standard library, the messages a host opens with:

- `initialize` with a protocol version in PROTOCOL_VERSIONS and params
  shaped as the spec says (anything else goes to the SDK, which answers it
  or refuses it as it always did);
- `notifications/initialized` (no answer);
- `tools/list` and `ping`, once `initialize` was answered.

The first other message hands over: the SDK is given the `initialize`
request again (its answer, already sent, is dropped by `Wire`) and the
`initialized` notification, so it is in the state the host believes, then
that message and the rest of stdin. The answers are those the SDK gives
(tests/mcp_server/test_handshake.py compares them).
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, Iterator

# What the SDK negotiates (mcp.server.runner.HANDSHAKE_PROTOCOL_VERSIONS); a
# version not listed here is left to the SDK.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
EARLY = ("initialize", "notifications/initialized", "tools/list", "ping")


def initialize_result(version: str, instructions: str, server_version: str) -> dict[str, Any]:
    return {"capabilities": {"tools": {"listChanged": False}}, "instructions": instructions,
            "protocolVersion": version, "serverInfo": {"name": "thatch", "version": server_version}}


def tools_result(tools: list) -> dict[str, Any]:
    """`tools/list`'s result for thatch's tools (mcp/tool.Tool), as the SDK words it."""
    return {"tools": [{"name": tool.name, "description": tool.description, "inputSchema": tool.schema(),
                       "annotations": {"readOnlyHint": tool.read_only,
                                       "destructiveHint": tool.name == "memory_forget",
                                       "openWorldHint": False}} for tool in tools]}


def _request_id(message: dict) -> Any:
    value = message.get("id")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def _initialize_version(message: dict) -> str | None:
    """The protocol version to answer `initialize` with here, or None to leave it to the SDK."""
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    client = params.get("clientInfo")
    version = params.get("protocolVersion")
    if (version not in PROTOCOL_VERSIONS or not isinstance(params.get("capabilities"), dict)
            or not isinstance(client, dict) or not isinstance(client.get("name"), str)
            or not isinstance(client.get("version"), str)):
        return None
    return version


class Opening:
    """What was answered early, and what the SDK must see first: `replay`
    (the lines to give it before the rest of stdin), `answered` (the id of
    the `initialize` it must not answer again), `ended` (stdin closed)."""

    def __init__(self) -> None:
        self.replay: list[bytes] = []
        self.answered: Any = None
        self.ended = False


def answer_opening(source: Iterator[Any], send: Callable[[dict], None], *, instructions: str, server_version: str,
                   tools: Callable[[], dict[str, Any]]) -> Opening:
    """Answer the handshake messages at the head of `source` (lines of
    stdin) through `send`, up to the first one the SDK must handle."""
    opening = Opening()
    for line in source:
        message = _message(line)
        method = message.get("method") if message is not None else None
        if message is None or method not in EARLY:
            opening.replay.append(line)
            return opening
        if method == "initialize":
            version = _initialize_version(message)
            if opening.answered is not None or version is None or _request_id(message) is None:
                opening.replay.append(line)
                return opening
            opening.answered = _request_id(message)
            opening.replay.append(line)
            send({"jsonrpc": "2.0", "id": opening.answered,
                  "result": initialize_result(version, instructions, server_version)})
        elif method == "notifications/initialized":
            if "id" in message:
                opening.replay.append(line)
                return opening
            opening.replay.append(line)
        elif opening.answered is None or _request_id(message) is None or message.get("params") not in (None, {}):
            opening.replay.append(line)
            return opening
        else:
            send({"jsonrpc": "2.0", "id": _request_id(message), "result": tools() if method == "tools/list" else {}})
    opening.ended = True
    return opening


def _message(line: Any) -> dict | None:
    if not isinstance(line, bytes):
        return None
    try:
        message = json.loads(line)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    return message


class Wire:
    """The host's end of stdout, written by the handshake and then by the
    SDK (as its `stdout`: async write and flush). fd 1 itself is pointed at
    stderr, as the SDK does when it owns stdout, so stray output from a
    library or a child cannot corrupt the protocol. The SDK's answer to the
    replayed `initialize` (request id `skip`) is dropped."""

    def __init__(self) -> None:
        self._out = os.fdopen(os.dup(1), "wb")
        os.dup2(2, 1)
        self._lock = threading.Lock()
        self.skip: Any = None
        self._skipping = False

    def send(self, message: dict) -> None:
        self._write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")

    def skip_answer_to(self, request_id: Any) -> None:
        self.skip, self._skipping = request_id, request_id is not None

    def _write(self, text: str) -> None:
        if self._skipping:
            try:
                message = json.loads(text)
            except ValueError:
                message = None
            if isinstance(message, dict) and "method" not in message and message.get("id") == self.skip:
                self._skipping = False
                return
        with self._lock:
            self._out.write(text.encode("utf-8"))
            self._out.flush()

    async def write(self, text: str) -> None:
        import anyio.to_thread

        await anyio.to_thread.run_sync(self._write, text)

    async def flush(self) -> None:
        """Each write is flushed already."""
