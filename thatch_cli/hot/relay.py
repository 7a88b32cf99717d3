"""The every-prompt hook as a thin client: `thatch flush-tools` hands its
whole request (argv, the host's payload on stdin, its directory, environment
and umask) to the warm daemon named by the hooks' pointer
(daemon/reach.py) and prints what the daemon's run of the very same hook
code returns (hot/flush.served). Under a CPU load every millisecond this
process spends is multiplied, and the daemon has everything imported, the
store cached and the model loaded.

This module imports only os, _socket and the few constants it needs, and
parses no JSON: the request's header is written here, the one reply that
counts is `{"ok":true,"code":N}`. Anything else (no pointer or socket, a
refused connection, another version, protocol or model, a request the
daemon declines, a reply not understood) runs the hook in this process as
before, with the payload already read. A daemon that has not answered a
moment before the hook's deadline (hot/deadline.py) gets no more time: the
hook's late answer is printed, as the in-process watchdog would.
"""

from __future__ import annotations

# The C module: `import socket` costs ~2 ms more (enum conversions, selectors).
import _socket
import importlib
import os
import time  # a built-in module: no file to read

from .. import __version__
from ..daemon.reach import MAX_REQUEST_PAYLOAD, PROTOCOL_VERSION, pointed_socket, unix_address
from .deadline import MAX_PAYLOAD_BYTES, remaining, write_answer

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Mapping

# The hooks a daemon runs for their process: name -> the module whose
# main(argv, stdin), served(argv, env, cwd, stdin) and late(argv) they are.
RELAYED = {"flush-tools": "thatch_cli.hot.flush"}
# Left of the deadline for printing the late answer (importing its module).
LATE_MARGIN = 0.2
_SUCCESS = b'{"ok":true,"code":'
_ESCAPES = {**{code: f"\\u{code:04x}" for code in range(32)}, ord('"'): '\\"', ord("\\"): "\\\\"}


def flush_tools(argv: list[str]) -> int:
    return relayed("flush-tools", argv)


def relayed(name: str, argv: list[str]) -> int:
    """Run the hook `name` by the daemon when it can, else in this process."""
    env = os.environ
    ends = time.monotonic() + remaining(env) - LATE_MARGIN
    stdin: bytes | None = None
    answer: bytes | None = None
    try:
        stdin = None if os.isatty(0) else _read_stdin(ends)
        if stdin is not None and len(stdin) <= MAX_REQUEST_PAYLOAD and env.get("THATCH_DAEMON") != "0":
            answer = ask(name, argv, env, stdin, ends)
    except TimeoutError:  # a payload that never ends, or a daemon that does not answer
        answer = importlib.import_module(RELAYED[name]).late(argv)
    if answer is None:
        return importlib.import_module(RELAYED[name]).main(argv, stdin)
    write_answer(answer)
    return 0


def _read_stdin(ends: float) -> bytes:
    """The host's payload: all of stdin up to just past MAX_PAYLOAD_BYTES (b"" when unreadable,
    which the hook reads as no payload, as it reads an unreadable stdin itself).
    Raises TimeoutError when it has not ended by `ends` (time.monotonic)."""
    import select  # an extension module: no Python file to read

    chunks, size = [], 0
    try:
        while size <= MAX_PAYLOAD_BYTES:
            if not select.select([0], [], [], max(0.0, ends - time.monotonic()))[0]:
                raise TimeoutError
            chunk = os.read(0, min(1 << 20, MAX_PAYLOAD_BYTES + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return b""
    return b"".join(chunks)


def ask(name: str, argv: list[str], env: Mapping[str, str], stdin: bytes, ends: float) -> bytes | None:
    """The hook's output as the daemon ran it; None when the daemon cannot
    run it. Raises TimeoutError when it has not answered by `ends`."""
    path = pointed_socket(env)
    if path is None:
        return None
    request = _request(name, argv, env, stdin)
    if request is None:
        return None
    budget = ends - time.monotonic()
    if budget <= 0:
        raise TimeoutError
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(budget)
        with unix_address(path) as address:
            sock.connect(address)
        sock.sendall(request)
        return _answer(sock, ends)
    except TimeoutError:
        raise
    except OSError:  # no daemon listens there (any more), or it went away
        return None
    finally:
        sock.close()


def _request(name: str, argv: list[str], env: Mapping[str, str], stdin: bytes) -> bytes | None:
    """One frame (daemon/protocol.py) of the `hook` operation; None for what
    cannot travel as UTF-8 (undecodable arguments or variables) or a
    directory that is gone."""
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    umask = os.umask(0o077)  # reading it means setting it; nothing runs meanwhile
    os.umask(umask)
    fields = ",".join(f"{_text(key)}:{_text(value)}" for key, value in env.items())
    header = (f'{{"op":"hook","protocol":{PROTOCOL_VERSION},"version":{_text(__version__)},'
              f'"argv":[{",".join(_text(arg) for arg in [name, *argv])}],"env":{{{fields}}},'
              f'"cwd":{_text(cwd)},"umask":{umask}}}')
    try:
        body = header.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return len(body).to_bytes(4, "big") + len(stdin).to_bytes(4, "big") + body + stdin


def _text(value: str) -> str:
    return '"' + value.translate(_ESCAPES) + '"'


def _answer(sock: _socket.socket, ends: float) -> bytes | None:
    """The reply's payload (the hook's stdout) when it is a success; None
    otherwise. Raises TimeoutError at `ends`."""

    def exactly(size: int) -> bytes:
        chunks, got = [], 0
        while got < size:
            left = ends - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
            chunk = sock.recv(min(1 << 20, size - got))
            if not chunk:
                raise ConnectionResetError  # the daemon went away mid-answer
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    prefix = exactly(8)
    header_size, payload_size = int.from_bytes(prefix[:4], "big"), int.from_bytes(prefix[4:], "big")
    if header_size > 64 or payload_size > MAX_PAYLOAD_BYTES:
        return None  # an error's message, or not an answer at all
    header = exactly(header_size)
    if not (header.startswith(_SUCCESS) and header.endswith(b"}") and header[len(_SUCCESS):-1].isdigit()):
        return None
    if int(header[len(_SUCCESS):-1]) != 0:
        return None  # hooks exit 0: anything else is for the hook in this process to say
    return exactly(payload_size)
