"""The daemon's wire protocol: one typed shape per operation, a version
checked on every request, and frames that cannot make the daemon allocate
what they merely claim."""

from __future__ import annotations

import socket
import threading

import pytest

from thatch_cli.daemon import protocol

# One fingerprint per protocol version. Changing a request or reply shape
# changes the fingerprint: bump PROTOCOL_VERSION and add the new entry here
# (older clients and daemons then replace each other instead of misreading).
# 3 was never released on its own: two changes (the dropped lowest cosine, the
# search's `wait`) met in 4. 8 was not released either: 9 added the status's
# hooks_answered before any release.
FINGERPRINTS = {2: "8caa4b73aa36167c", 3: "b07563456788f6b9", 4: "0dcdaf5e3cf9d16e", 5: "7a4ef8974b9dafe5", 6: "92e03ab4ab1cebb1",
                7: "1f35e1a37605cee4", 8: "8e67a638b333e080",
                9: "f2b807803b1ae642"}


def test_a_shape_change_needs_a_version_bump():
    assert protocol.fingerprint() == FINGERPRINTS[protocol.PROTOCOL_VERSION], (
        "the protocol's shapes changed: bump PROTOCOL_VERSION and record the new fingerprint")


def test_the_fingerprint_sees_a_renamed_field(monkeypatch):
    search = protocol.SHAPES["search"]
    renamed = {("filters" if k == "filter" else k): v for k, v in search.request_fields.items()}
    monkeypatch.setitem(protocol.SHAPES, "search", protocol.Shape("search", renamed, search.reply_fields))
    assert protocol.fingerprint() != FINGERPRINTS[protocol.PROTOCOL_VERSION]


def test_requests_are_built_and_read_by_their_shape():
    identity = {"model": "m", "version": "v", "protocol": protocol.PROTOCOL_VERSION}
    header = protocol.SHAPES["embed"].request(identity, texts=["a"], kind="passage")
    assert header == {"op": "embed", **identity, "texts": ["a"], "kind": "passage"}
    assert protocol.SHAPES["embed"].read_request(header) == {"texts": ["a"], "kind": "passage"}
    with pytest.raises(protocol.BadMessage, match="unknown field"):
        protocol.SHAPES["embed"].request(identity, texts=["a"], kind="passage", extra=1)
    with pytest.raises(protocol.BadMessage, match="missing field 'kind'"):
        protocol.SHAPES["embed"].request(identity, texts=["a"])
    with pytest.raises(protocol.BadMessage, match="'limit' has type bool"):
        protocol.SHAPES["search"].read_request({**dict.fromkeys(protocol.SHAPES["search"].request_fields),
                                                "db": "x", "filter": {}, "limit": True, "wait": False})


def _pair():
    return socket.socketpair()


def test_a_frame_claiming_too_much_is_refused_before_reading():
    left, right = _pair()
    with left, right:
        left.sendall((1).to_bytes(4, "big") + (protocol.MAX_REQUEST_PAYLOAD + 1).to_bytes(4, "big"))
        with pytest.raises(protocol.ProtocolError, match="frame too large"):
            protocol.receive(right, max_payload=protocol.MAX_REQUEST_PAYLOAD)
        left.sendall((protocol.MAX_HEADER + 1).to_bytes(4, "big") + (0).to_bytes(4, "big"))
        with pytest.raises(protocol.ProtocolError, match="frame too large"):
            protocol.receive(right)


def test_a_lying_length_costs_only_what_arrives():
    """A header that claims 30 MiB and sends 10 bytes: the reader waits for
    the rest without allocating 30 MiB, and stops when the peer leaves."""
    import tracemalloc

    left, right = _pair()
    tracemalloc.start()
    try:
        def lie() -> None:
            left.sendall((30 * 1024 * 1024).to_bytes(4, "big") + (0).to_bytes(4, "big") + b"{" * 10)
            left.close()

        threading.Thread(target=lie).start()
        with pytest.raises(protocol.ProtocolError, match="closed mid-message"):
            protocol.receive(right)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        right.close()
    assert peak < 4 * 1024 * 1024


def test_frames_round_trip():
    left, right = _pair()
    with left, right:
        protocol.send(left, {"op": "ping", "ü": [1, 2]}, b"\x00\x01")
        assert protocol.receive(right) == ({"op": "ping", "ü": [1, 2]}, b"\x00\x01")
