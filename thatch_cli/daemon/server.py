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

The store cache keeps, per (database file, store, model space, dim), the
matrix search.load_store_vectors builds plus the count of rows the model
cannot rank, stamped with MemoryDB.store_version; a request whose store
version differs reloads it (inside one read transaction, so the matrix and
the version agree). The database stays the only source of truth.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Mapping

from .. import __version__
from . import protocol, runtime

LOCK_WAIT = 30.0
TICK = 0.2
DRAIN = 10.0
CONNECTION_IDLE = 120.0
MAX_CACHED = 32
IDENTITY_FREE_OPS = {"ping", "status", "shutdown"}


def log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    sys.stderr.write(f"{stamp} [{os.getpid()}] {message}\n")
    sys.stderr.flush()


class RequestError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- the model -----------------------------------------------------------------


class Model:
    """The embedder, loaded once in the background. Every encode runs on one
    long-lived worker thread: calls are serialised, and torch's OpenMP
    thread team is created once instead of by each connection's thread
    (which costs ~10 ms per request)."""

    def __init__(self, env: Mapping[str, str], rundir: str | None = None) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.env = env
        self.rundir = rundir
        self.name = runtime.expected_model(env)
        self.ready = threading.Event()
        self.embedder = None
        self.dim = 0
        self.error: str | None = None
        self.load_seconds: float | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")

    def start_loading(self) -> None:
        self._worker.submit(self.load)

    def load(self) -> None:
        started = time.monotonic()
        try:
            from ..embeddings import embedder_from_env
            from ..errors import ThatchError

            try:
                embedder = embedder_from_env(self.env)
                probe = embedder.embed_query("dimension probe")  # loads and warms the model
                self.embedder, self.dim = embedder, int(probe.shape[-1])
                if embedder.name != self.name:
                    log(f"model reports name {embedder.name!r}, expected {self.name!r}")
                    self.name = embedder.name
            except ThatchError as exc:
                self.error = exc.message
            except Exception as exc:  # a broken install must not kill the daemon silently
                self.error = f"cannot load embedding model: {type(exc).__name__}: {exc}"
        finally:
            self.load_seconds = time.monotonic() - started
            self.ready.set()
        if self.error:
            log(f"model {self.name} unavailable: {self.error}")
        else:
            log(f"model {self.name} loaded in {self.load_seconds:.1f}s (dim {self.dim})")
        self._mark_failure()

    def _mark_failure(self) -> None:
        """Leave a note so the prompt hook stops respawning a daemon for a
        model that cannot load (commands still try, and fall back)."""
        if not self.rundir:
            return
        from .warm import FAILED

        path = os.path.join(self.rundir, FAILED)
        try:
            if self.error:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(f"{self.name}\n{self.error}\n")
            elif os.path.exists(path):
                os.unlink(path)
        except OSError:
            pass

    def get(self):
        self.ready.wait()
        if self.embedder is None:
            raise RequestError("model_unavailable", self.error or "model not loaded")
        return self.embedder

    def _run(self, fn, *args):
        from ..errors import ThatchError

        try:
            return self._worker.submit(fn, *args).result()
        except ThatchError as exc:
            raise RequestError("model_unavailable", exc.message) from None

    def embed_query(self, text: str):
        return self._run(self.get().embed_query, text)

    def embed_passages(self, texts: list[str]):
        return self._run(self.get().embed_passages, texts)

    def close(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)


# -- the store cache -------------------------------------------------------------


@dataclass
class Entry:
    version: int
    vectors: Any  # vectors.StoreVectors
    unranked: int


class StoreCache:
    def __init__(self, max_entries: int = MAX_CACHED) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple, Entry] = OrderedDict()
        self._dbs: dict[str, tuple[tuple[int, int], Any, threading.Lock]] = {}
        self._guard = threading.Lock()
        self.loads = 0
        self.patches = 0

    def _database(self, path: str):
        """(real path, MemoryDB, lock) for a database file, reopened when the
        file was replaced (its cached entries go with it)."""
        import sqlite3
        from pathlib import Path

        from ..errors import ThatchError
        from ..store import MemoryDB

        real = os.path.realpath(path)
        try:
            st = os.stat(real)
        except OSError as exc:
            raise RequestError("database", f"cannot open database {path}: {exc.strerror or exc}") from None
        ident = (st.st_dev, st.st_ino)
        with self._guard:
            known = self._dbs.get(real)
            if known is not None and known[0] == ident:
                return real, known[1], known[2]
            if known is not None:
                # The file was replaced: forget it (its connection closes when
                # the last request using it lets go) and whatever we cached.
                for key in [k for k in self._entries if k[0] == real]:
                    del self._entries[key]
            try:
                db = MemoryDB.open(Path(real))  # creates or upgrades the schema like any command
            except ThatchError as exc:
                raise RequestError("database", exc.message) from None
            db.conn.close()
            # Used from several threads, always under this database's lock.
            db.conn = sqlite3.connect(real, isolation_level=None, timeout=10.0, check_same_thread=False)
            db.conn.execute("PRAGMA busy_timeout = 10000")
            lock = threading.Lock()
            self._dbs[real] = (ident, db, lock)
            return real, db, lock

    def entry(self, path: str, store: str, space: str, dim: int) -> Entry:
        from ..embeddings import model_space
        from ..search import load_store_vectors

        real, db, lock = self._database(path)
        key = (real, store, space, dim)
        with lock:
            version = db.store_version(store)
            with self._guard:
                found = self._entries.get(key)
                if found is not None and found.version == version:
                    self._entries.move_to_end(key)
                    return found
            db.conn.execute("BEGIN")
            try:
                version = db.store_version(store)
                vectors = load_store_vectors(db, store, space, dim)
                unranked = sum(count for model, length, count in db.vector_inventory([store])
                               if length != 4 * dim or model_space(model) != space)
            finally:
                db.conn.execute("COMMIT")
            entry = Entry(version, vectors, unranked)
            with self._guard:
                self._entries[key] = entry
                self._entries.move_to_end(key)
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
                self.loads += 1
            trim_heap()
            return entry

    def apply_saved(self, path: str, store: str, before: int, after: int, slug: str,
                    saved: tuple[str | None, bool, str | None, bytes | None], replaced: bool) -> int:
        """Patch cached matrices of `store` for one memory just saved, when
        the cache holds exactly the state before that save (store version
        `before`); the save moved the version to `after`. Anything else
        (other writes interleaved, an unknown state) is left for the next
        request to reload from the database. Returns how many entries were
        patched."""
        from ..search import comparable

        real, db, lock = self._database(path)
        branch, archived, model, blob = saved
        patched = 0
        with lock:
            with self._guard:
                found = [(k, e) for k, e in self._entries.items()
                         if k[0] == real and k[1] == store and e.version == before]
            for key, entry in found:
                _, _, space, dim = key
                row = (branch, archived, blob) if blob is not None and comparable(model, blob, space, dim) else None
                vectors, was_ranked = with_row(entry.vectors, slug, row, dim)
                unranked = entry.unranked - (1 if replaced and not was_ranked else 0) + (0 if row else 1)
                with self._guard:
                    self._entries[key] = Entry(after, vectors, max(unranked, 0))
                    self.patches += 1
                patched += 1
        return patched

    def size(self) -> tuple[int, int]:
        """(cached stores, cached vectors)."""
        with self._guard:
            return len(self._entries), sum(len(e.vectors.slugs) for e in self._entries.values())

    def close(self) -> None:
        with self._guard:
            for _, db, _ in self._dbs.values():
                db.close()
            self._dbs.clear()
            self._entries.clear()


def with_row(vectors, slug: str, row: tuple[str | None, bool, bytes] | None, dim: int):
    """(StoreVectors with `slug`'s row replaced by `row` (or removed when
    None), whether `slug` had a row). Rows stay in slug order, as
    load_store_vectors (ORDER BY slug) would put them, so a patched matrix
    ranks exactly like a reloaded one."""
    from bisect import bisect_left

    import numpy as np

    from ..vectors import StoreVectors, from_blob, normalise

    slugs = vectors.slugs
    i = bisect_left(slugs, slug)
    present = i < len(slugs) and slugs[i] == slug
    end = i + 1 if present else i
    branch_ids = dict(vectors.branch_ids)
    if row is None:
        middle_slugs: list[str] = []
        middle = (np.zeros((0, dim), np.float32), np.zeros(0, np.int32), np.zeros(0, bool))
    else:
        branch, archived, blob = row
        code = branch_ids.setdefault(branch, len(branch_ids) + 1) if branch else 0
        middle_slugs = [slug]
        middle = (normalise(from_blob(blob).reshape(1, dim)), np.array([code], np.int32), np.array([bool(archived)]))
    patched = StoreVectors(
        store=vectors.store,
        slugs=slugs[:i] + middle_slugs + slugs[end:],
        branch_codes=np.concatenate([vectors.branch_codes[:i], middle[1], vectors.branch_codes[end:]]),
        branch_ids=branch_ids,
        archived=np.concatenate([vectors.archived[:i], middle[2], vectors.archived[end:]]),
        matrix=np.concatenate([vectors.matrix[:i], middle[0], vectors.matrix[end:]]),
    )
    return patched, present


# -- the server --------------------------------------------------------------------


class Server:
    def __init__(self, env: Mapping[str, str], rundir: str) -> None:
        self.env = env
        self.rundir = rundir
        self.socket_path = os.path.join(rundir, runtime.SOCKET)
        self.idle = runtime.idle_seconds(env)
        self.model = Model(env, rundir)
        self.cache = StoreCache()
        self.started = time.time()
        self.requests = 0
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
            listener.bind(self.socket_path)
        finally:
            os.umask(old_umask)
        os.chmod(self.socket_path, 0o600)
        listener.listen(64)
        listener.settimeout(TICK)
        st = os.stat(self.socket_path)
        self._inode = (st.st_dev, st.st_ino)
        self._listener = listener
        runtime.write_pidfile(self.rundir, self.model.name)

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

    def _remove_pidfile(self) -> None:
        info = runtime.read_pidfile(self.rundir)
        if info and info["pid"] == os.getpid():
            try:
                os.unlink(os.path.join(self.rundir, runtime.PIDFILE))
            except OSError:
                pass

    # -- connections ------------------------------------------------------------

    def _handle(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(CONNECTION_IDLE)
            while True:
                try:
                    request, payload = protocol.receive(conn)
                except (protocol.ProtocolError, OSError):
                    return
                with self._state:
                    self.requests += 1
                    self.last_activity = time.monotonic()
                try:
                    reply, data = self.dispatch(request, payload)
                except RequestError as err:
                    reply, data = {"ok": False, "error": err.code, "message": err.message}, b""
                except Exception as exc:  # a bug: answer it, keep serving
                    log(f"error in {request.get('op')!r}: {type(exc).__name__}: {exc}")
                    reply, data = {"ok": False, "error": "internal", "message": f"{type(exc).__name__}: {exc}"}, b""
                try:
                    protocol.send(conn, reply, data)
                except OSError:
                    return  # the client left (e.g. a fire-and-forget notice)
                if request.get("op") == "shutdown" and reply.get("stopping"):
                    return
        finally:
            conn.close()
            with self._state:
                self.active -= 1
                self.last_activity = time.monotonic()

    def dispatch(self, request: dict, payload: bytes) -> tuple[dict, bytes]:
        op = request.get("op")
        handler = getattr(self, f"op_{op}", None) if isinstance(op, str) else None
        if handler is None:
            raise RequestError("bad_request", f"unknown op {op!r}")
        if op not in IDENTITY_FREE_OPS:
            mine = {"model": self.model.name, "version": __version__}
            theirs = {"model": request.get("model"), "version": request.get("version")}
            if theirs != mine:
                raise RequestError("mismatch", f"daemon serves {mine}, request wants {theirs}")
        return handler(request, payload)

    # -- operations ---------------------------------------------------------------

    def op_ping(self, request: dict, payload: bytes) -> tuple[dict, bytes]:
        return {"ok": True, "pid": os.getpid(), "model": self.model.name, "version": __version__,
                "ready": self.model.ready.is_set()}, b""

    def op_status(self, request: dict, payload: bytes) -> tuple[dict, bytes]:
        stores, vectors = self.cache.size()
        return {
            "ok": True,
            "pid": os.getpid(),
            "model": self.model.name,
            "version": __version__,
            "ready": self.model.ready.is_set(),
            "model_error": self.model.error,
            "model_load_seconds": self.model.load_seconds,
            "dim": self.model.dim or None,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "uptime_seconds": round(time.time() - self.started, 3),
            "rss_bytes": rss_bytes(),
            "requests": self.requests,
            "idle_timeout_seconds": self.idle,
            "cached_stores": stores,
            "cached_vectors": vectors,
            "cache_loads": self.cache.loads,
            "cache_patches": self.cache.patches,
            "socket": self.socket_path,
            "python": sys.version.split()[0],
        }, b""

    def op_shutdown(self, request: dict, payload: bytes) -> tuple[dict, bytes]:
        unless = request.get("unless")
        if unless and unless == {"model": self.model.name, "version": __version__}:
            return {"ok": True, "stopping": False, "pid": os.getpid()}, b""
        self.stop(request.get("reason") or "asked to stop")
        return {"ok": True, "stopping": True, "pid": os.getpid()}, b""

    def op_info(self, request: dict, payload: bytes) -> tuple[dict, bytes]:
        self.model.get()
        return {"ok": True, "model": self.model.name, "dim": self.model.dim}, b""

    def op_embed(self, request: dict, payload: bytes) -> tuple[dict, bytes]:
        from ..vectors import to_blob

        texts = request.get("texts")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise RequestError("bad_request", "texts must be a list of strings")
        if request.get("kind") == "query":
            vectors = [self.model.embed_query(t) for t in texts]
            data = b"".join(to_blob(v) for v in vectors)
        else:
            data = to_blob(self.model.embed_passages(texts)) if texts else b""
        return {"ok": True, "model": self.model.name, "dim": self.model.dim, "count": len(texts)}, data

    def op_search(self, request: dict, payload: bytes) -> tuple[dict, bytes]:
        from ..embeddings import model_space
        from ..search import semantic
        from ..vectors import to_blob

        db_path, stores = request.get("db"), request.get("stores")
        if not isinstance(db_path, str) or not isinstance(stores, list):
            raise RequestError("bad_request", "search needs db and stores")
        returned = b""
        if isinstance(request.get("query"), str):
            vector = self.model.embed_query(request["query"])
        elif isinstance(request.get("passage"), str):
            vector = self.model.embed_passages([request["passage"]])[0]
            returned = to_blob(vector)
        else:
            raise RequestError("bad_request", "search needs a query or a passage")
        space, dim = model_space(self.model.name) or "", int(vector.shape[-1])
        entries: dict[str, Entry] = {}

        def loader(store: str, space: str, dim: int):
            entries[store] = self.cache.entry(db_path, store, space, dim)
            return entries[store].vectors

        hits, floor = semantic(
            loader,
            stores,
            vector,
            space=space,
            branch=request.get("branch"),
            include_archived=bool(request.get("include_archived")),
            limit=int(request.get("limit") or 10),
            exclude={(s, slug) for s, slug in request.get("exclude") or []},
            min_score=request.get("min_score"),
            any_branch=bool(request.get("any_branch")),
        )
        unranked = sum(e.unranked for e in entries.values())
        return {"ok": True, "model": self.model.name, "dim": dim, "unranked": unranked, "floor": floor,
                "hits": [[h.store, h.slug, h.score] for h in hits]}, returned


    def op_saved(self, request: dict, payload: bytes) -> tuple[dict, bytes]:
        """A client saved one memory and tells us, so the cached matrix is
        patched instead of reloaded (see StoreCache.apply_saved)."""
        try:
            db_path, store, slug = str(request["db"]), str(request["store"]), str(request["slug"])
            before, after = int(request["before"]), int(request["after"])
        except (KeyError, TypeError, ValueError):
            raise RequestError("bad_request", "saved needs db, store, slug, before and after") from None
        saved = (request.get("branch"), bool(request.get("archived")), request.get("model"), payload or None)
        patched = self.cache.apply_saved(db_path, store, before, after, slug, saved, bool(request.get("replaced")))
        return {"ok": True, "patched": patched}, b""


def trim_heap() -> None:
    """Give the allocator's free memory back to the OS. Loading a store
    goes through one Python bytes object per row; without this the daemon
    keeps ~150 MB of freed heap per 100k vectors loaded (glibc only)."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def rss_bytes() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    except Exception:
        return None


# -- entry point ----------------------------------------------------------------


def _ask(path: str, header: dict, timeout: float = 2.0) -> dict | None:
    try:
        runtime.check_socket(path)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(path)
            protocol.send(sock, header)
            return protocol.receive(sock)[0]
    except (OSError, runtime.UnsafeRuntime, protocol.ProtocolError):
        return None


def acquire_lock(rundir: str, wanted: dict[str, str], wait: float = LOCK_WAIT) -> int | None:
    """The daemon lock's fd, or None when another daemon serves `wanted`
    (or the holder never lets go)."""
    fd = runtime.open_lock(os.path.join(rundir, runtime.LOCK))
    socket_path = os.path.join(rundir, runtime.SOCKET)
    deadline = time.monotonic() + wait
    asked_to_stop = False
    while True:
        if runtime.try_flock(fd):
            return fd
        answer = _ask(socket_path, {"op": "ping"})
        if answer and answer.get("ok"):
            if {"model": answer.get("model"), "version": answer.get("version")} == wanted:
                break  # a daemon like us is already serving
            if not asked_to_stop:
                _ask(socket_path, {"op": "shutdown", "unless": wanted, "reason": f"replaced by {wanted}"})
                asked_to_stop = True
        if time.monotonic() > deadline:
            log("another daemon holds the lock; giving up")
            break
        time.sleep(0.05)
    os.close(fd)
    return None


MAX_LOG_BYTES = 1024 * 1024


def main(env: Mapping[str, str] | None = None) -> int:
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
    wanted = runtime.identity(env)
    lock_fd = acquire_lock(rundir, wanted)
    if lock_fd is None:
        return 0
    server = Server(env, rundir)
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
