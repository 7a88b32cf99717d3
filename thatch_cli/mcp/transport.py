"""The stdio transport under the SDK: what reaches the server from stdin,
and the answers the SDK would not give.

The SDK's own reader drops a line it cannot parse without a word, so a
client that sent malformed JSON, or a string with a lone surrogate escape
("\\ud800", valid JSON but not Unicode text), waited forever. Here every
line is checked first: malformed JSON is answered with -32700 (id null, as
JSON-RPC says), a request carrying a lone surrogate or not shaped like
JSON-RPC with -32600/-32602 under its own id, a request whose id is not a
string or an integer (an object, an array, a boolean, 1.5, null: the SDK
took it for a notification) with -32600 under id null; only good lines go
on to the SDK. Lines are read by a daemon thread (a blocking read on stdin cannot be
interrupted, and a worker thread the interpreter waits for at exit kept
the server alive after SIGINT until stdin closed), at most MAX_LINE_BYTES
of a line at a time (a longer one is answered and skipped).
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

# A tool call carries at most a 64 KiB memory; a JSON-RPC line this long is not one.
MAX_LINE_BYTES = 4 * 1024 * 1024
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


class Refused(Exception):
    """A line that is not a request the SDK can take, the error to answer it
    with, and whether to answer (a notification gets no answer)."""

    def __init__(self, code: int, message: str, request_id: Any = None, answer: bool = True) -> None:
        super().__init__(message)
        self.code, self.message, self.request_id, self.answer = code, message, request_id, answer


def check(line: bytes | Any) -> str:
    """The line as text when it is a JSON-RPC message the SDK can take;
    Refused otherwise (under the request's id, null when it has none usable)."""
    from ..memory.jsonl import TooLong

    if isinstance(line, TooLong):
        raise Refused(PARSE_ERROR, f"Parse error: a message longer than {MAX_LINE_BYTES // 1024 // 1024} MiB")
    try:
        text = line.decode("utf-8")
        message = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise Refused(PARSE_ERROR, f"Parse error: {_short(str(exc))}") from None
    request_id = _id_of(message)
    answer = not isinstance(message, dict) or "id" in message
    if isinstance(message, dict) and "method" in message and "id" in message and not _id_type(message["id"]):
        # The SDK would take it for a notification (no answer, the client
        # waits forever): JSON-RPC 2.0 answers an id that is not a string or
        # an integer with Invalid Request under id null.
        raise Refused(INVALID_REQUEST, "Invalid Request: the id must be a string or an integer, not"
                      f" {_kind(message['id'])}")
    if _has_surrogate(message):
        where = INVALID_PARAMS if isinstance(message, dict) and _has_surrogate(message.get("params")) else \
            INVALID_REQUEST
        raise Refused(where, "a string holds a lone surrogate escape (such as \\ud800), which is not Unicode text",
                      request_id, answer)
    import mcp_types

    try:
        mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError as exc:
        raise Refused(INVALID_REQUEST, f"Invalid Request: {_short(str(exc).splitlines()[0])}", request_id,
                      answer) from None
    return text


def _id_of(message: Any) -> Any:
    """The request's id when it is one JSON-RPC allows (else no id to answer under)."""
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, str) and len(value) <= 200 and not _has_surrogate(value):
            return value
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53:
            return value
    return None


def _id_type(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a fraction"
    kinds: dict[type, str] = {dict: "an object", list: "an array"}
    return kinds.get(type(value), "that")


def _has_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def stdin_lines() -> Iterator[Any]:
    """stdin's lines (bytes, or TooLong past MAX_LINE_BYTES), from a reader of
    our own on a copy of fd 0: the interpreter, shutting down with the
    reading thread still blocked, would otherwise wait for sys.stdin's lock
    and abort."""
    import os

    from ..memory.jsonl import lines

    return lines(open(os.dup(sys.stdin.fileno()), "rb"), MAX_LINE_BYTES)


class Lines:
    """stdin as the SDK reads it (`async for line in stdin`), with every
    refused line answered through `answer` (set once the SDK's write stream
    exists)."""

    def __init__(self, source: Iterator[Any] | None = None, first: list[Any] | None = None) -> None:
        """`source`: the lines still to read (default: stdin's, stdin_lines());
        `first`: lines read already (the handshake's, mcp/handshake.py), served before them."""
        self._lines = itertools.chain(first or [], source if source is not None else stdin_lines())
        self.answer: MemoryObjectSendStream[SessionMessage] | None = None

    def __aiter__(self) -> AsyncIterator[str]:
        return self._read()

    async def _read(self) -> AsyncIterator[str]:
        import threading

        import anyio
        import anyio.from_thread
        import anyio.lowlevel

        send, receive = anyio.create_memory_object_stream[Any](16)
        token = anyio.lowlevel.current_token()

        def pump() -> None:
            try:
                for line in self._lines:
                    anyio.from_thread.run(send.send, line, token=token)
            except Exception:  # the loop is gone (the server stopped), or stdin failed
                pass
            finally:
                try:
                    anyio.from_thread.run_sync(send.close, token=token)
                except Exception:
                    pass

        threading.Thread(target=pump, name="thatch-mcp-stdin", daemon=True).start()
        async with receive:
            async for line in receive:
                if isinstance(line, bytes) and not line.strip():
                    continue
                try:
                    yield check(line)
                except Refused as refused:
                    if refused.answer:
                        await self._reply(refused)

    async def _reply(self, refused: Refused) -> None:
        import mcp_types
        from mcp.shared.message import SessionMessage

        if self.answer is None:
            return
        error = mcp_types.JSONRPCError(jsonrpc="2.0", id=refused.request_id,
                                       error=mcp_types.ErrorData(code=refused.code, message=refused.message))
        await self.answer.send(SessionMessage(error))
