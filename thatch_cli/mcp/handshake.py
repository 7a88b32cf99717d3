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
- `tools/list` and `ping`, once `initialize` was answered;
- the stateless era's `server/discover` and `tools/list` (MODERN_VERSION,
  each request carrying the client in `_meta`): Claude Code 2.1.332 probes
  with `server/discover` first and waits up to 3 s for it before falling
  back to `initialize`.

The first other message hands over: the SDK is given the `initialize`
request again (its answer, already sent, is dropped by `Wire`) and the
`initialized` notification, so it is in the state the host believes, then
that message and the rest of stdin (stateless requests need no such replay). The answers are those the SDK gives
(tests/mcp_server/test_handshake.py compares them).

`thatch mcp` with plain arguments comes here straight from the entry point
(`main`), past the command-line machinery; anything else (help, a value
out of range) takes the usual way, which checks and explains.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, Iterator, Mapping

INSTRUCTIONS = """\
thatch is this project's long-term memory (shared with the `thatch` CLI and other sessions).
- Recall first: at the start of a task, and whenever the user refers to something that may have been \
decided, fixed or preferred before, call memory_recall with a short query (it searches this project's \
store and the global store). Read a hit in full with memory_show.
- Remember what lasts: when you learn a decision, a convention, a non-obvious fix, or a preference or \
correction from the user, call memory_remember with a short label and self-contained content \
(store "global" for what holds across projects). Update with overwrite: true rather than adding a near-copy.
- Tidy when asked or when hygiene is reported: find_duplicates, dedup_mark_checked, memory_hygiene.
- When a thatch: note says tool interactions are queued, fetch them with get_extraction_payload, save what is durable, then call extraction_done."""

# What the SDK negotiates (mcp.server.runner.HANDSHAKE_PROTOCOL_VERSIONS); a
# version not listed here is left to the SDK.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# The stateless era a host may probe for first (`server/discover`), as the SDK speaks it.
MODERN_VERSION = "2026-07-28"
_META = "io.modelcontextprotocol"


def initialize_result(version: str, instructions: str, server_version: str) -> dict[str, Any]:
    return {"capabilities": {"tools": {"listChanged": False}}, "instructions": instructions,
            "protocolVersion": version, "serverInfo": {"name": "thatch", "version": server_version}}


def tools_result(tools: list | None = None) -> dict[str, Any]:
    """`tools/list`'s result for thatch's tools (default: mcp/tools.TOOLS), as the SDK words it."""
    if tools is None:
        from .tools import TOOLS

        tools = TOOLS
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
        answer = _answer(message, opening, instructions, server_version, tools) if message is not None else None
        if answer is None:
            opening.replay.append(line)
            return opening
        if answer is not _SILENT and message is not None:
            send({"jsonrpc": "2.0", "id": message["id"], "result": answer})
    opening.ended = True
    return opening


_SILENT: dict[str, Any] = {}  # a notification taken: nothing to answer


def _answer(message: dict, opening: Opening, instructions: str, server_version: str,
            tools: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
    """The result to answer `message` with here (_SILENT for a notification
    taken), or None when it must go to the SDK. An `initialize` answered here
    and the `initialized` that follows are kept in `opening` for the SDK."""
    method, request_id = message.get("method"), _request_id(message)
    if method == "notifications/initialized" and "id" not in message and opening.answered is not None:
        opening.replay.append(json.dumps(message).encode() + b"\n")
        return _SILENT
    if request_id is None:
        return None
    if _modern(message):
        # The stateless era: each request says who asks; nothing to hand the SDK later.
        if method == "server/discover":
            return {"cacheScope": "private", "capabilities": {"tools": {"listChanged": False}},
                    "instructions": instructions, "resultType": "complete", "supportedVersions": [MODERN_VERSION],
                    "ttlMs": 0, "_meta": _stamp(server_version)}
        if method == "tools/list":
            return {"cacheScope": "private", "resultType": "complete", **tools(), "ttlMs": 0,
                    "_meta": _stamp(server_version)}
        return None
    if method == "initialize":
        version = _initialize_version(message)
        if opening.answered is not None or version is None:
            return None
        opening.answered = request_id
        opening.replay.append(json.dumps(message).encode() + b"\n")
        return initialize_result(version, instructions, server_version)
    if method in ("tools/list", "ping") and opening.answered is not None and message.get("params") in (None, {}):
        return tools() if method == "tools/list" else {}
    return None


def _modern(message: dict) -> bool:
    """Whether `message` is a request of the stateless era (its params only
    `_meta` naming MODERN_VERSION, the client and its capabilities), shaped as the SDK takes it."""
    params = message.get("params")
    if not isinstance(params, dict) or set(params) != {"_meta"} or not isinstance(params["_meta"], dict):
        return False
    meta = params["_meta"]
    client = meta.get(f"{_META}/clientInfo")
    return (meta.get(f"{_META}/protocolVersion") == MODERN_VERSION and isinstance(client, dict)
            and isinstance(client.get("name"), str) and isinstance(client.get("version"), str)
            and isinstance(meta.get(f"{_META}/clientCapabilities"), dict))


def _stamp(server_version: str) -> dict[str, Any]:
    return {f"{_META}/serverInfo": {"name": "thatch", "version": server_version}}


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


def serve(env: Mapping[str, str], *, max_chars: int, lock_wait: float) -> None:
    """`thatch mcp`: serve over stdin/stdout until the host closes stdin (or
    SIGINT), the opening answered here while the SDK imports."""
    from .. import __version__
    from .transport import stdin_lines

    importing = threading.Thread(target=_import_sdk, name="thatch-mcp-import", daemon=True)
    wire = Wire()
    source = stdin_lines()

    listed: list[dict[str, Any]] = []

    def tools() -> dict[str, Any]:
        if not listed:
            listed.append(tools_result())
        return listed[0]

    def send(message: dict) -> None:
        wire.send(message)
        if importing.ident is None:
            # The host reads the first answer; meanwhile the tools' list is
            # made ready, then the SDK imports (it competes for the interpreter).
            tools()
            _started(env, importing)

    try:
        opening = answer_opening(source, send, instructions=INSTRUCTIONS, server_version=__version__,
                                 tools=tools)
    except KeyboardInterrupt:
        return
    if opening.ended:
        return
    if importing.ident is None:
        _started(env, importing)
    importing.join()
    wire.skip_answer_to(opening.answered)
    from .server import run_sdk

    run_sdk(env, max_chars=max_chars, lock_wait=lock_wait, instructions=INSTRUCTIONS, source=source,
            first=opening.replay, wire=wire)


def _started(env: Mapping[str, str], importing: threading.Thread) -> None:
    from ..daemon.warm import maybe_warm

    importing.start()
    maybe_warm(env)  # the model loads while the host is still handshaking


def _import_sdk() -> None:
    import anyio  # noqa: F401
    import mcp.server.lowlevel  # noqa: F401
    import mcp.server.stdio  # noqa: F401
    import mcp_types  # noqa: F401

    from . import server  # noqa: F401


def main(args: list[str]) -> int | None:
    """`thatch mcp ARGS` when ARGS are plain (--max-chars N, --lock-wait S,
    values in range): serve and return 0; None for anything else, which
    the command line then handles (and explains)."""
    from ..support import settings

    options: dict[str, str] = {}
    rest = list(args)
    while rest:
        name, _, value = rest.pop(0).partition("=")
        if name not in ("--max-chars", "--lock-wait") or name in options:
            return None
        if not value:
            if not rest:
                return None
            value = rest.pop(0)
        options[name] = value
    env = os.environ
    try:
        max_chars = int(options["--max-chars"]) if "--max-chars" in options else settings.value(env, "mcp.max_chars")
        lock_wait = float(options.get("--lock-wait", settings.LOCK_WAIT))
    except Exception:  # a bad value or setting: the command line says what is wrong
        return None
    if max_chars < settings.MCP_MIN_CHARS or not 0 <= lock_wait <= 600:
        return None
    serve(env, max_chars=max_chars, lock_wait=lock_wait)
    return 0
