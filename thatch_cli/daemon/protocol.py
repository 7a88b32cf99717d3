"""Wire format between commands and the daemon (standard library only).

Every message, either way, is one frame:

    4 bytes  big-endian length of the JSON header
    4 bytes  big-endian length of the binary payload (often 0)
    header   UTF-8 JSON object
    payload  raw bytes: vectors as little-endian float32, row after row

Requests carry {"op": ..., "model": ..., "version": ...} and op-specific
fields; the daemon answers {"ok": true, ...} or {"ok": false, "error":
code, "message": text}. A connection may carry several requests in turn.
Vectors travel as bytes so the client never needs numpy: the payload is
exactly what goes into the `embedding` column.
"""

from __future__ import annotations

import json
from typing import Any

MAX_HEADER = 64 * 1024 * 1024
MAX_PAYLOAD = 1024 * 1024 * 1024


class ProtocolError(Exception):
    """The peer closed the connection or sent something that is not a frame."""


def pack(header: dict[str, Any], payload: bytes = b"") -> bytes:
    body = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return len(body).to_bytes(4, "big") + len(payload).to_bytes(4, "big") + body + payload


def send(sock, header: dict[str, Any], payload: bytes = b"") -> None:
    sock.sendall(pack(header, payload))


def _read_exactly(sock, size: int) -> bytes:
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:], size - got)
        if n == 0:
            raise ProtocolError("connection closed mid-message" if got or size else "connection closed")
        got += n
    return bytes(buffer)


def receive(sock) -> tuple[dict[str, Any], bytes]:
    """One frame; ProtocolError on EOF before a complete frame."""
    prefix = sock.recv(8)
    if not prefix:
        raise ProtocolError("connection closed")
    if len(prefix) < 8:
        prefix += _read_exactly(sock, 8 - len(prefix))
    header_len = int.from_bytes(prefix[:4], "big")
    payload_len = int.from_bytes(prefix[4:], "big")
    if header_len > MAX_HEADER or payload_len > MAX_PAYLOAD:
        raise ProtocolError("frame too large")
    try:
        header = json.loads(_read_exactly(sock, header_len).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"bad header: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not an object")
    payload = _read_exactly(sock, payload_len) if payload_len else b""
    return header, payload


def split_vectors(payload: bytes, dim: int) -> list[bytes]:
    """The payload cut into one float32 BLOB per row."""
    width = 4 * dim
    return [payload[i : i + width] for i in range(0, len(payload), width)]
