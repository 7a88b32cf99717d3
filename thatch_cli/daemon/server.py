"""The daemon process: `python -m thatch_cli.daemon serve`.

Lifecycle
  1. Take daemon.lock (exclusive flock, held until the process ends). If a
     live daemon holds it: exit when it already serves our model and
     version, ask it to stop when it does not, and wait (up to
     LOCK_WAIT seconds) for a daemon that is shutting down.
  2. Holding the lock proves any socket or pid file left behind is stale:
     remove it, bind a fresh socket (0600 via umask 077), write daemon.pid.
  3. Load the model in a background thread while already accepting
     connections, so status answers at once and the first request simply
     waits for the model.
  4. Serve each connection in its own thread; model calls are serialised by
     a lock, the store cache has a lock per database file.
  5. Stop after THATCH_DAEMON_IDLE seconds (default 600) without a request
     or open connection, on `shutdown`, on SIGTERM/SIGINT, or when our socket
     file was removed or replaced. The socket is unlinked first (new
     commands then start a new daemon, which waits for our lock), in-flight
     requests get up to DRAIN seconds, then the pid file goes and the lock
     is released by exiting.

The model lives in model.py, the store cache in cache.py, and what each
operation does in handlers.py; this module serves connections.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from typing import Mapping

from .. import __version__
from . import memory, protocol, runtime
from .cache import StoreCache
from .handlers import HANDLERS, Hook
from .log import log
from .model import Model
from .protocol import ErrorReply

LOCK_WAIT = 30.0
TICK = 0.2
DRAIN = 10.0
CONNECTION_IDLE = 120.0
POINTER_CHECK = 5.0


class Server:
    def __init__(self, env: Mapping[str, str], rundir: str, hooks: Mapping[str, Hook] | None = None) -> None:
        self.env = env
        self.rundir = rundir
        self.hooks: Mapping[str, Hook] = hooks or {}
        self.umask = os.umask(0o077)  # reading the umask means setting it: once, before any thread runs
        os.umask(self.umask)
        self._pointed = 0.0  # when the hooks' pointer was last checked (runtime.claim)
        self.socket_path = os.path.join(rundir, runtime.SOCKET)
        self.idle = runtime.idle_seconds(env)
        self.model = Model(env, rundir)
        self.cache = StoreCache()
        self.started = time.time()
        self.requests = 0
        self.hooks_answered = 0  # hooks run here for their process (hot/relay.py)
        self.active = 0
        self.last_activity = time.monotonic()
        self.stopping = threading.Event()
        self.stop_reason = ""
        self._state = threading.Lock()
        self.pending_stop = ""  # set by signal handlers, acted on by the main loop
        self._listener: socket.socket | None = None
        self._inode: tuple[int, int] | None = None

    # -- lifecycle ------------------------------------------------------------

    def bind(self) -> None:
        try:
            os.unlink(self.socket_path)  # we hold the lock: whatever is there is stale
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            with runtime.unix_address(self.socket_path) as address:
                listener.bind(address)
        finally:
            os.umask(old_umask)
        os.chmod(self.socket_path, 0o600)
        listener.listen(64)
        listener.settimeout(TICK)
        st = os.stat(self.socket_path)
        self._inode = (st.st_dev, st.st_ino)
        self._listener = listener
        runtime.write_pidfile(self.rundir, self.model.name)
        self._point()

    def _point(self) -> None:
        """Name this daemon in the hooks' pointer unless another live one
        is named there (runtime.claim): only a daemon that runs hooks."""
        self._pointed = time.monotonic()
        if self.hooks:
            try:
                runtime.claim(self.rundir)
            except OSError as exc:
                log(f"cannot write the hooks' pointer: {exc}")

    def answered_hook(self) -> None:
        with self._state:
            self.hooks_answered += 1

    def stop(self, reason: str) -> None:
        """Stop taking connections now; the main loop drains and exits."""
        with self._state:
            if self.stopping.is_set():
                return
            self.stop_reason = reason
            self.stopping.set()
            self._unlink_socket()

    def _unlink_socket(self) -> None:
        try:
            st = os.stat(self.socket_path)
            if (st.st_dev, st.st_ino) == self._inode:
                os.unlink(self.socket_path)
        except OSError:
            pass

    def _socket_is_ours(self) -> bool:
        try:
            st = os.stat(self.socket_path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._inode

    def serve_forever(self) -> None:
        self.model.start_loading()
        assert self._listener is not None
        while not self.stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                self._tick()
                continue
            except OSError:
                if self.stopping.is_set():
                    break
                raise
            with self._state:
                self.active += 1
                self.last_activity = time.monotonic()
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()
        self._listener.close()
        deadline = time.monotonic() + DRAIN
        while self.active and time.monotonic() < deadline:
            time.sleep(0.02)
        self._remove_pidfile()
        self.cache.close()
        self.model.close()
        log(f"stopped ({self.stop_reason}); served {self.requests} requests")

    def _tick(self) -> None:
        if self.pending_stop:
            self.stop(self.pending_stop)
            return
        with self._state:
            idle_for = time.monotonic() - self.last_activity
            active = self.active
        if not active and idle_for >= self.idle:
            self.stop(f"idle for {idle_for:.0f}s")
        elif not self._socket_is_ours():
            self.stop("socket file removed or replaced")
        elif self.model.ready.is_set() and self.model.embedder is None and not active and idle_for >= 1.0:
            self.stop("model unavailable")
        elif time.monotonic() - self._pointed >= POINTER_CHECK:
            self._point()  # the daemon named there may have exited

    def _remove_pidfile(self) -> None:
        info = runtime.read_pidfile(self.rundir)
        if info and info["pid"] == os.getpid():
            try:
                os.unlink(os.path.join(self.rundir, runtime.PIDFILE))
            except OSError:
                pass

    # -- connections ------------------------------------------------------------

    def identity(self) -> dict:
        return {"model": self.model.name, "version": __version__, "protocol": protocol.PROTOCOL_VERSION}

    def _handle(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(CONNECTION_IDLE)
            while True:
                try:
                    request, payload = protocol.receive(conn, max_payload=protocol.MAX_REQUEST_PAYLOAD)
                except (protocol.ProtocolError, OSError):
                    return
                with self._state:
                    self.requests += 1
                    self.last_activity = time.monotonic()
                try:
                    reply, data = self.dispatch(request, payload)
                except ErrorReply as err:
                    reply, data = protocol.error(err.code, err.message), b""
                except Exception as exc:  # a bug: answer it, keep serving
                    log(f"error in {request.get('op')!r}: {type(exc).__name__}: {exc}")
                    reply, data = protocol.error("internal", f"{type(exc).__name__}: {exc}"), b""
                try:
                    protocol.send(conn, reply, data)
                except OSError:
                    return  # the client left (e.g. a fire-and-forget notice)
                finally:
                    memory.trim()  # what the request allocated and freed goes back (daemon/memory.py)
                if request.get("op") == "shutdown" and reply.get("stopping"):
                    return
        finally:
            conn.close()
            with self._state:
                self.active -= 1
                self.last_activity = time.monotonic()

    def dispatch(self, request: dict, payload: bytes) -> tuple[dict, bytes]:
        op = request.get("op")
        shape = protocol.SHAPES.get(op) if isinstance(op, str) else None
        if shape is None:
            raise ErrorReply("bad_request", f"unknown op {op!r}")
        if shape.bound:
            theirs = {key: request.get(key) for key in ("model", "version", "protocol")}
            if theirs != self.identity():
                raise ErrorReply("mismatch", f"daemon serves {self.identity()}, request wants {theirs}")
        try:
            fields = shape.read_request(request)
        except protocol.BadMessage as exc:
            raise ErrorReply("bad_request", str(exc)) from None
        reply, data = HANDLERS[shape.op](self, fields, payload)
        return shape.reply(**reply), data


# -- entry point ----------------------------------------------------------------


def _ask(path: str, header: dict, timeout: float = 2.0) -> dict | None:
    try:
        runtime.check_socket(path)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            with runtime.unix_address(path) as address:
                sock.connect(address)
            protocol.send(sock, header)
            return protocol.receive(sock)[0]
    except (OSError, runtime.UnsafeRuntime, protocol.ProtocolError):
        return None


def acquire_lock(rundir: str, wanted: dict[str, object], wait: float = LOCK_WAIT) -> int | None:
    """The daemon lock's fd, or None when another daemon serves `wanted`
    (or the holder never lets go)."""
    fd = runtime.open_lock(os.path.join(rundir, runtime.LOCK))
    socket_path = os.path.join(rundir, runtime.SOCKET)
    deadline = time.monotonic() + wait
    asked_to_stop = False
    while True:
        if runtime.try_flock(fd):
            return fd
        answer = _ask(socket_path, protocol.SHAPES["ping"].request({}))
        if answer and answer.get("ok"):
            if {key: answer.get(key) for key in wanted} == wanted:
                break  # a daemon like us is already serving
            if not asked_to_stop:
                _ask(socket_path, protocol.SHAPES["shutdown"].request({}, unless=wanted, reason=f"replaced by {wanted}"))
                asked_to_stop = True
        if time.monotonic() > deadline:
            log("another daemon holds the lock; giving up")
            break
        time.sleep(0.05)
    os.close(fd)
    return None


MAX_LOG_BYTES = 1024 * 1024


def main(env: Mapping[str, str] | None = None, hooks: Mapping[str, Hook] | None = None) -> int:
    """Serve until idle or stopped. `hooks`: the hooks this daemon runs for
    other processes (handlers.hook), given by the process entry point."""
    env = dict(os.environ if env is None else env)
    os.chdir("/")
    try:  # stderr is daemon.log, opened for appending by whoever spawned us
        if os.fstat(2).st_size > MAX_LOG_BYTES:
            os.ftruncate(2, 0)
    except OSError:
        pass
    try:
        rundir = runtime.ensure_dir(env)
    except (OSError, runtime.UnsafeRuntime) as exc:
        log(f"refusing to start: {exc}")
        return 1
    wanted = {**runtime.identity(env), "protocol": protocol.PROTOCOL_VERSION}
    lock_fd = acquire_lock(rundir, wanted)
    if lock_fd is None:
        return 0
    server = Server(env, rundir, hooks)
    try:
        server.bind()
    except OSError as exc:
        log(f"cannot bind {server.socket_path}: {exc}")
        return 1
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: setattr(server, "pending_stop", f"signal {signum}"))
    log(f"serving {wanted['model']} (thatch {wanted['version']}) on {server.socket_path}, idle exit {server.idle:g}s")
    try:
        server.serve_forever()
    finally:
        os.close(lock_fd)
    return 0
