"""Talking to the daemon: connect, start it when absent, replace it when it
serves another model or thatch version. Imports no numpy: `thatch recall`
runs this in a fresh process on every call.

Starting (under spawn.lock, so racing commands start one daemon):
  connect again (someone may have just started it); if a daemon spawned
  moments ago is still starting, wait for it; otherwise spawn one and wait
  until its socket accepts. The first request then waits while the daemon
  loads the model. That is the faster choice for the first call too: the
  daemon needs the same ~6 s load as an in-process embed, both compete for
  the same two cores, and waiting leaves a warm daemon behind.
"""

from __future__ import annotations

# The C module: `import socket` costs ~2 ms more (enum conversions,
# selectors), on every `thatch recall`.
import _socket
import os
import time

from ..support import settings
from . import protocol, runtime

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2.5 ms to import typing
if TYPE_CHECKING:
    from typing import Any, Callable, Mapping

CONNECT_TIMEOUT = 5.0
REQUEST_TIMEOUT = 120.0  # the first request waits for the model to load
# While waiting for an answer, the daemon is asked every ANSWER_SLICE
# seconds, on a second connection, whether it is alive (a ping needs no
# model, so a daemon loading one or embedding a big batch still answers).
# A stopped (SIGSTOP) or hung daemon does not, and the command goes on
# in-process after a few seconds instead of waiting REQUEST_TIMEOUT.
ANSWER_SLICE = 2.0
PING_TIMEOUT = 2.0
START_TIMEOUT = 20.0  # from spawn to an accepting socket (python start + imports)
SPAWN_LOCK_WAIT = 30.0
AHEAD_TIMEOUT = 0.2  # embed_ahead's send: a hint is never worth a wait


class Unreachable(Exception):
    """The daemon cannot serve this command (disabled, unsafe, failed to
    start, went away): the caller embeds in-process."""


class NotRunning(Unreachable):
    """No daemon is running and we were told not to start one."""


class Overloaded(Unreachable):
    """The daemon is there but not keeping up: it stopped answering, or did
    not start in time. Every command loading the model
    in its own process then would be a herd on a machine already out of
    breath, so callers degrade instead (engine.DaemonEngine)."""




class Client:
    def __init__(self, env: Mapping[str, str], *, autostart: bool = True, timeout: float = REQUEST_TIMEOUT) -> None:
        self.env = env
        self.autostart = autostart
        self.timeout = timeout
        self.identity = {**runtime.identity(env), "protocol": protocol.PROTOCOL_VERSION}
        self.spawned: int | None = None  # pid of a daemon this client started
        self._sock: _socket.socket | None = None
        self._rundir: str | None = None

    # -- requests ------------------------------------------------------------------

    def call(self, op: str, payload: bytes = b"", *, meanwhile: Callable[[], None] | None = None,
             **fields: Any) -> tuple[dict, bytes]:
        """Send one request of operation `op` (its fields as protocol.SHAPES
        declares them) and return (reply fields, payload) of a successful
        answer. Raises Unreachable, NotRunning, or protocol.ErrorReply for an error
        the daemon reported (model_unavailable, database, bad_request).
        `meanwhile` runs once, after the first send, while the daemon works."""
        shape = protocol.SHAPES[op]
        header = shape.request(self.identity, **fields)
        problem, error = "no answer", Unreachable
        for _attempt in range(3):
            sock = self._connection()
            try:
                protocol.send(sock, header, payload)
                if meanwhile is not None:
                    task, meanwhile = meanwhile, None
                    try:
                        task()
                    except BaseException:
                        self.close()  # its reply is still on the way: never read it as another's
                        raise
                self._await_answer(sock)
                reply, data = protocol.receive(sock)
            except TimeoutError:
                self.close()
                raise Overloaded(f"no answer within {self.timeout:g}s") from None
            except (OSError, protocol.ProtocolError) as exc:
                # Crashed, or exited idle just as we connected: start afresh.
                problem, error = f"daemon went away ({exc})", Unreachable
                self.close()
                continue
            if reply.get("ok"):
                try:
                    return shape.read_reply(reply), data
                except protocol.BadMessage as exc:
                    self.close()
                    raise Unreachable(f"malformed answer: {exc}") from None
            code, message = str(reply.get("error")), str(reply.get("message"))
            if code == "mismatch":
                # Our model's own directory, another thatch or protocol version (or the
                # same folder holding other weights now): the old daemon makes way.
                problem, error = message, Unreachable
                self.close()
                if not self.autostart:
                    raise NotRunning(message)
                self._replace()
                continue
            raise protocol.ErrorReply(code, message)
        raise error(problem)

    def _await_answer(self, sock: _socket.socket) -> None:
        """Return once the answer starts arriving. Raises TimeoutError after
        the request timeout, Unreachable as soon as the daemon stops
        answering pings."""
        import select

        deadline = time.monotonic() + self.timeout
        while not select.select([sock], [], [], min(ANSWER_SLICE, self.timeout))[0]:
            if time.monotonic() >= deadline:
                raise TimeoutError
            if not self._alive():
                self.close()
                raise Overloaded(f"the daemon stopped answering (no reply to a ping within {PING_TIMEOUT:g}s)")

    def _ping(self) -> dict | None:
        """The daemon's ping answer on a fresh connection, None without one."""
        try:
            sock = self._try_connect(self.rundir())
        except Unreachable:
            return None
        if sock is None:
            return None
        try:
            sock.settimeout(PING_TIMEOUT)
            protocol.send(sock, protocol.SHAPES["ping"].request({}))
            reply = protocol.receive(sock)[0]
            return reply if reply.get("ok") else None
        except (OSError, protocol.ProtocolError):
            return None
        finally:
            sock.close()

    def _alive(self) -> bool:
        return self._ping() is not None

    def notify(self, op: str, payload: bytes = b"", **fields: Any) -> None:
        """Send a request on the open connection without waiting for the
        answer (used for cache hints). Never raises, never starts a daemon."""
        if self._sock is None:
            return
        try:
            protocol.send(self._sock, protocol.SHAPES[op].request(self.identity, **fields), payload)
        except OSError:
            pass
        self.close()

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None

    # -- connecting and starting -----------------------------------------------------

    def rundir(self) -> str:
        if self._rundir is None:
            if runtime.disabled(self.env):
                raise Unreachable(f"disabled by {settings.origin(self.env, 'daemon.enabled')}")
            try:
                self._rundir = runtime.ensure_dir(self.env)
            except runtime.UnsafeRuntime as exc:
                raise Unreachable(str(exc)) from None
            except OSError as exc:
                raise Unreachable(f"runtime directory unusable: {exc.strerror or exc}") from None
        return self._rundir

    def _connection(self) -> _socket.socket:
        if self._sock is not None:
            return self._sock
        rundir = self.rundir()
        sock = self._try_connect(rundir)
        if sock is None:
            if not self.autostart:
                raise NotRunning("the daemon is not running")
            sock = self._start(rundir)
        sock.settimeout(self.timeout)
        self._sock = sock
        return sock

    def _try_connect(self, rundir: str) -> _socket.socket | None:
        """A connected socket, or None when no daemon listens there."""
        path = os.path.join(rundir, runtime.SOCKET)
        try:
            runtime.check_socket(path)
        except FileNotFoundError:
            return None
        except runtime.UnsafeRuntime as exc:
            raise Unreachable(str(exc)) from None
        except OSError as exc:
            raise Unreachable(f"cannot inspect {path}: {exc.strerror or exc}") from None
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        sock.settimeout(CONNECT_TIMEOUT)
        try:
            with runtime.unix_address(path) as address:
                sock.connect(address)
        except OSError:  # refused: a stale socket from a dead daemon
            sock.close()
            return None
        return sock

    def _spawn_lock(self, rundir: str) -> int:
        from ..support.files import acquire_lock

        try:
            return acquire_lock(os.path.join(rundir, runtime.SPAWN_LOCK), SPAWN_LOCK_WAIT)
        except TimeoutError:
            raise Overloaded("another command has been starting the daemon for too long") from None

    def _start(self, rundir: str) -> _socket.socket:
        fd = self._spawn_lock(rundir)
        try:
            sock = self._try_connect(rundir)
            if sock is not None:
                return sock
            pid = runtime.read_spawned(fd)
            if pid is not None and runtime.pid_alive(pid) and runtime.is_daemon(pid):
                # Started moments ago (by the shell hook, say): wait for it.
                try:
                    return self._wait_for_socket(rundir, pid, ours=False)
                except Unreachable:
                    pass
            try:
                pid = runtime.spawn(self.env, rundir)
            except OSError as exc:
                raise Unreachable(f"cannot start the daemon: {exc.strerror or exc}") from None
            except (NotImplementedError, ValueError) as exc:  # no posix_spawn setsid here
                raise Unreachable(f"cannot start the daemon: {exc}") from None
            runtime.write_spawned(fd, pid)
            self.spawned = pid
            return self._wait_for_socket(rundir, pid, ours=True)
        finally:
            os.close(fd)

    def _wait_for_socket(self, rundir: str, pid: int, ours: bool) -> _socket.socket:
        deadline = time.monotonic() + (START_TIMEOUT if ours else START_TIMEOUT / 2)
        delay = 0.005
        while True:
            sock = self._try_connect(rundir)
            if sock is not None:
                return sock
            if ours:
                try:
                    done = os.waitpid(pid, os.WNOHANG)[0]
                except ChildProcessError:
                    done = pid
                alive = done == 0
            else:
                alive = runtime.pid_alive(pid)
            if not alive:
                sock = self._try_connect(rundir)  # it may have bowed out to a daemon like us
                if sock is not None:
                    return sock
                raise Overloaded(f"the daemon exited during start-up (see {os.path.join(rundir, runtime.LOG)})")
            if time.monotonic() > deadline:
                raise Overloaded(f"the daemon did not start within {START_TIMEOUT:g}s")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.05)

    def _replace(self) -> None:
        """Stop a daemon of another version (or weights) in our model's directory and start ours."""
        rundir = self.rundir()
        fd = self._spawn_lock(rundir)
        try:
            sock = self._try_connect(rundir)
            if sock is not None:
                try:
                    protocol.send(sock, protocol.SHAPES["shutdown"].request(
                        {}, unless=self.identity, reason=f"replaced by {self.identity}"))
                    protocol.receive(sock)
                except (OSError, protocol.ProtocolError):
                    pass
                finally:
                    sock.close()
        finally:
            os.close(fd)

    # -- management ----------------------------------------------------------------

    def status(self) -> dict | None:
        """The daemon's status, or None when none runs (never starts one)."""
        try:
            rundir = runtime.ensure_dir(self.env)
        except (OSError, runtime.UnsafeRuntime) as exc:
            raise Unreachable(str(exc)) from None
        sock = self._try_connect(rundir)
        if sock is None:
            return None
        try:
            sock.settimeout(CONNECT_TIMEOUT)
            protocol.send(sock, protocol.SHAPES["status"].request({}))
            return protocol.receive(sock)[0]
        except (OSError, protocol.ProtocolError):
            return None
        finally:
            sock.close()

    def stop(self, timeout: float = 15.0) -> dict | None:
        """Ask the daemon to stop and wait until it has released its lock;
        SIGTERM (then SIGKILL) a daemon that does not answer. Returns what
        was stopped ({pid, ...}) or None when nothing ran."""
        try:
            rundir = runtime.ensure_dir(self.env)
        except (OSError, runtime.UnsafeRuntime) as exc:
            raise Unreachable(str(exc)) from None
        info = runtime.read_pidfile(rundir)
        answer = None
        sock = self._try_connect(rundir)
        if sock is not None:
            try:
                sock.settimeout(CONNECT_TIMEOUT)
                protocol.send(sock, protocol.SHAPES["shutdown"].request({}, unless=None, reason="thatch daemon stop"))
                answer = protocol.receive(sock)[0]
            except (OSError, protocol.ProtocolError):
                answer = None
            finally:
                sock.close()
        if not runtime.lock_held(rundir):
            return {"pid": answer.get("pid") if answer else None} if answer else None
        pid = (answer or {}).get("pid") or (info or {}).get("pid")
        deadline = time.monotonic() + timeout
        signalled = answer is not None
        while runtime.lock_held(rundir):
            if time.monotonic() > deadline:
                if pid and runtime.is_daemon(pid):
                    _kill(pid, 9)
                time.sleep(0.2)
                if runtime.lock_held(rundir):
                    raise Unreachable(f"the daemon (pid {pid}) did not stop")
                break
            if pid is None:  # a daemon still starting writes its pid file once it has bound the socket
                pid = (runtime.read_pidfile(rundir) or {}).get("pid")
            if not signalled and pid and runtime.is_daemon(pid):
                _kill(pid, 15)
                signalled = True
            time.sleep(0.02)
        return {"pid": pid}

def embed_ahead(env: Mapping[str, str], text: str) -> None:
    """Ask a running daemon to start embedding `text` as a query, and return
    at once: the prompt hook sends this before its imports and database
    work, so the search it sends later finds the vector made (or being made)
    instead of waiting for it. Never starts a daemon, never waits for the
    answer, never raises."""
    try:
        client = Client(env, autostart=False)
        sock = client._try_connect(client.rundir())
        if sock is None:
            return
        try:
            sock.settimeout(AHEAD_TIMEOUT)
            protocol.send(sock, protocol.SHAPES["embed"].request(client.identity, texts=[text], kind="query"))
        finally:
            sock.close()  # the daemon's answer finds nobody: it goes on serving (server._handle)
    except Exception:  # a hint: whatever goes wrong here, the search does the work itself
        pass


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:
        pass
