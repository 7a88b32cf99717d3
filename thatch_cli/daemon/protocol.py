"""The wire protocol between commands and the daemon (standard library only).

Every message, either way, is one frame:

    4 bytes  big-endian length of the JSON header
    4 bytes  big-endian length of the binary payload (often 0)
    header   UTF-8 JSON object
    payload  raw bytes: vectors as little-endian float32, row after row

Each operation has one request shape and one reply shape, declared below
(`SHAPES`); both sides build and check messages through them, so a field
is named on the wire only here, never derived from a Python parameter name.
Requests carry {"op", "protocol", "model", "version"} besides their fields;
a daemon answers a request of another protocol, model or thatch version
with the error "mismatch", and the client replaces it. Replies are
{"ok": true, ...fields} or {"ok": false, "error": code, "message": text}.
Changing a shape means bumping PROTOCOL_VERSION (a test holds the
shapes' fingerprint per version).

Vectors travel as bytes so the client never needs numpy: the payload is
exactly what goes into the `embedding` column.
"""

from __future__ import annotations

# Both here for their users, defined in reach.py for the hooks' thin client.
from .reach import MAX_REQUEST_PAYLOAD as MAX_REQUEST_PAYLOAD
from .reach import PROTOCOL_VERSION as PROTOCOL_VERSION

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2.5 ms to import typing
if TYPE_CHECKING:
    from typing import Any

# Checked against the declared sizes before anything is read: a frame that
# claims more is refused without allocating for it. A request's header holds
# at most one import batch of texts (256 x 64 KiB); its payload one vector.
MAX_HEADER = 32 * 1024 * 1024
MAX_REPLY_PAYLOAD = 256 * 1024 * 1024
_CHUNK = 1 << 20

NONE = type(None)
TEXT, OPT_TEXT, FLAG, COUNT = (str,), (str, NONE), (bool,), (int,)
NUMBER, OPT_NUMBER, LIST, OPT_OBJECT = (int, float), (int, float, NONE), (list,), (dict, NONE)


# Error codes a client acts on: the model cannot load at all, or is not loaded yet.
MODEL_UNAVAILABLE = "model_unavailable"
MODEL_LOADING = "model_loading"
# A hook request the daemon will not run for its process (daemon/handlers.hook): it runs there.
DECLINED = "declined"


class ProtocolError(Exception):
    """The peer closed the connection or sent something that is not a frame."""


class BadMessage(Exception):
    """A header that does not fit its operation's shape."""


class ErrorReply(Exception):
    """An error answer: raised by a handler to send one, by the client on receiving one."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Shape:
    """One operation: the fields of its request and of its successful reply
    (name -> accepted JSON types)."""

    def __init__(self, op: str, request: dict[str, tuple], reply: dict[str, tuple], *,
                 bound: bool = True) -> None:
        self.op, self.request_fields, self.reply_fields = op, request, reply
        self.bound = bound  # served only to clients of the same protocol, model and thatch version

    def request(self, identity: dict[str, Any], **fields: Any) -> dict[str, Any]:
        return {"op": self.op, **identity, **_checked(f"{self.op} request", self.request_fields, fields, build=True)}

    def read_request(self, header: dict[str, Any]) -> dict[str, Any]:
        return _checked(f"{self.op} request", self.request_fields, header, build=False)

    def reply(self, **fields: Any) -> dict[str, Any]:
        return {"ok": True, **_checked(f"{self.op} reply", self.reply_fields, fields, build=True)}

    def read_reply(self, header: dict[str, Any]) -> dict[str, Any]:
        return _checked(f"{self.op} reply", self.reply_fields, header, build=False)


def _checked(what: str, fields: dict[str, tuple], given: dict[str, Any], *, build: bool) -> dict[str, Any]:
    """`given` restricted to `fields`, every one present with an accepted type.
    Building a message, an unknown name is a bug and raises too."""
    if build:
        unknown = set(given) - set(fields)
        if unknown:
            raise BadMessage(f"{what}: unknown field(s) {', '.join(sorted(unknown))}")
    out = {}
    for name, types in fields.items():
        if name not in given:
            raise BadMessage(f"{what}: missing field {name!r}")
        value = given[name]
        # bool is an int to Python; only a field declared bool accepts one.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise BadMessage(f"{what}: field {name!r} has type {type(value).__name__}")
        out[name] = value
    return out


_STATUS = {
    "pid": COUNT, "model": TEXT, "version": TEXT, "protocol": COUNT, "ready": FLAG, "model_error": OPT_TEXT,
    "model_load_seconds": OPT_NUMBER, "dim": (int, NONE), "started_at": TEXT, "uptime_seconds": NUMBER,
    "rss_bytes": (int, NONE), "requests": COUNT, "idle_timeout_seconds": NUMBER, "cached_stores": COUNT,
    "cached_vectors": COUNT, "cache_loads": COUNT, "cache_patches": COUNT, "hooks_answered": COUNT, "socket": TEXT,
    "python": TEXT,
}

SHAPES: dict[str, Shape] = {shape.op: shape for shape in (
    Shape("ping", {}, {"pid": COUNT, "model": TEXT, "version": TEXT, "protocol": COUNT, "ready": FLAG},
          bound=False),
    Shape("status", {}, _STATUS, bound=False),
    Shape("shutdown", {"unless": OPT_OBJECT, "reason": TEXT}, {"stopping": FLAG, "pid": COUNT}, bound=False),
    # The model's calibration (calibration.Calibration.to_json).
    Shape("info", {}, {"model": TEXT, "dim": COUNT, "calibration": (dict,)}),
    # Payload of the reply: one vector per text.
    Shape("embed", {"texts": LIST, "kind": TEXT}, {"model": TEXT, "dim": COUNT, "count": COUNT}),
    # Exactly one of query / passage; a passage's vector comes back as the payload.
    # hits: [store, slug, calibrated score, raw cosine]; min_score is on the calibrated scale.
    # wait=False: answer "model_loading" at once instead of waiting for the model.
    # filter: memory.filter.Filter.to_json, which memories the search keeps.
    Shape("search", {
        "db": TEXT, "filter": (dict,), "query": OPT_TEXT, "passage": OPT_TEXT, "limit": COUNT,
        "min_score": OPT_NUMBER, "wait": FLAG,
    }, {"model": TEXT, "dim": COUNT, "unranked": COUNT, "hits": LIST}),
    # Payload of the request: the saved memory's vector (or nothing).
    # fields: its filterable fields' stored values (memory/fields.py `filter`).
    # A hook run for another process (hot/relay.py): its argv (the hook's name
    # first), environment, directory and umask; the request's payload is its
    # stdin, the reply's its stdout. Checked by the handler, which knows the
    # model the environment selects: "mismatch" for another version, protocol
    # or model, "declined" for a request only the process itself can run.
    Shape("hook", {"protocol": COUNT, "version": TEXT, "argv": LIST, "env": (dict,), "cwd": TEXT, "umask": COUNT},
          {"code": COUNT}, bound=False),
    Shape("saved", {
        "db": TEXT, "store": TEXT, "slug": TEXT, "branch": OPT_TEXT, "archived": FLAG, "model": OPT_TEXT,
        "fields": (dict,), "before": COUNT, "after": COUNT, "replaced": FLAG,
    }, {"patched": COUNT}),
)}


def fingerprint() -> str:
    """A digest of every shape: a test pins it per PROTOCOL_VERSION."""
    import hashlib
    import json

    described = {op: {"bound": s.bound,
                      "request": {k: sorted(t.__name__ for t in v) for k, v in s.request_fields.items()},
                      "reply": {k: sorted(t.__name__ for t in v) for k, v in s.reply_fields.items()}}
                 for op, s in sorted(SHAPES.items())}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:16]


def error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": code, "message": message}


# -- frames ------------------------------------------------------------------


def pack(header: dict[str, Any], payload: bytes = b"") -> bytes:
    import json  # here, not above: the hooks' thin client (hot/relay.py) reads this module's constants only

    body = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return len(body).to_bytes(4, "big") + len(payload).to_bytes(4, "big") + body + payload


def send(sock, header: dict[str, Any], payload: bytes = b"") -> None:
    sock.sendall(pack(header, payload))


def _read_exactly(sock, size: int) -> bytes:
    """`size` bytes, read in chunks: memory grows with what actually
    arrives, never with what a frame merely claims."""
    chunks, got = [], 0
    while got < size:
        chunk = sock.recv(min(_CHUNK, size - got))
        if not chunk:
            raise ProtocolError("connection closed mid-message" if got or size else "connection closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def receive(sock, *, max_payload: int = MAX_REPLY_PAYLOAD) -> tuple[dict[str, Any], bytes]:
    """One frame; ProtocolError on EOF before a complete frame or a frame
    larger than allowed."""
    prefix = sock.recv(8)
    if not prefix:
        raise ProtocolError("connection closed")
    if len(prefix) < 8:
        prefix += _read_exactly(sock, 8 - len(prefix))
    header_len = int.from_bytes(prefix[:4], "big")
    payload_len = int.from_bytes(prefix[4:], "big")
    if header_len > MAX_HEADER or payload_len > max_payload:
        raise ProtocolError(f"frame too large ({header_len} + {payload_len} bytes)")
    import json

    try:
        header = json.loads(_read_exactly(sock, header_len).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProtocolError(f"bad header: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not an object")
    payload = _read_exactly(sock, payload_len) if payload_len else b""
    return header, payload


def split_vectors(payload: bytes, dim: int) -> list[bytes]:
    """The payload cut into one float32 BLOB per row."""
    width = 4 * dim
    return [payload[i : i + width] for i in range(0, len(payload), width)]
