"""What the daemon does for each operation of the protocol. Each handler
takes the server, the request's checked fields and its payload, and returns
the reply's fields and payload (protocol.SHAPES declares both)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Mapping, Protocol

from .. import __version__
from . import runtime
from .cache import StoreCache
from .model import Model
from .protocol import DECLINED, MODEL_LOADING, PROTOCOL_VERSION, ErrorReply

Reply = tuple[dict[str, Any], bytes]
# A hook run for another process: (its argv after the hook's name, its
# environment, its directory, its stdin) -> (exit code, stdout), or None
# when only that process can run this request. The process entry point
# that starts the daemon hands it the table of these (hot/served.py).
Hook = Callable[[list[str], dict[str, str], str, bytes], "tuple[int, bytes] | None"]
# Variables naming files: relative, they would be read against the daemon's
# directory (/), not the hook's. HOME also stands for `~` (os.path.expanduser
# reads the daemon's own), so it must be the daemon's.
PATH_VARIABLES = ("HOME", "THATCH_DB", "THATCH_DB_PATH", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
                  "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR")


class Server(Protocol):
    """What the handlers use of the running server (server.Server is one)."""

    model: Model
    cache: StoreCache
    started: float
    requests: int
    hooks_answered: int
    idle: float
    socket_path: str
    rundir: str
    umask: int
    hooks: Mapping[str, Hook]

    def identity(self) -> dict: ...

    def answered_hook(self) -> None: ...

    def stop(self, reason: str) -> None: ...


def ping(server: Server, request: dict, payload: bytes) -> Reply:
    return {"pid": os.getpid(), "model": server.model.name, "version": __version__, "protocol": PROTOCOL_VERSION,
            "ready": server.model.ready.is_set()}, b""


def status(server: Server, request: dict, payload: bytes) -> Reply:
    stores, vectors = server.cache.size()
    return {
        "pid": os.getpid(),
        "model": server.model.name,
        "version": __version__,
        "protocol": PROTOCOL_VERSION,
        "ready": server.model.ready.is_set(),
        "model_error": server.model.error,
        "model_load_seconds": server.model.load_seconds,
        "dim": server.model.dim or None,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(server.started)),
        "uptime_seconds": round(time.time() - server.started, 3),
        "rss_bytes": rss_bytes(),
        "requests": server.requests,
        "hooks_answered": server.hooks_answered,
        "idle_timeout_seconds": server.idle,
        "cached_stores": stores,
        "cached_vectors": vectors,
        "cache_loads": server.cache.loads,
        "cache_patches": server.cache.patches,
        "socket": server.socket_path,
        "python": sys.version.split()[0],
    }, b""


def shutdown(server: Server, request: dict, payload: bytes) -> Reply:
    unless = request["unless"]
    if unless and unless == server.identity():
        return {"stopping": False, "pid": os.getpid()}, b""
    server.stop(request["reason"] or "asked to stop")
    return {"stopping": True, "pid": os.getpid()}, b""


def info(server: Server, request: dict, payload: bytes) -> Reply:
    server.model.get()
    calibration = server.model.calibration
    assert calibration is not None  # get() returns once the model and its calibration are loaded
    return {"model": server.model.name, "dim": server.model.dim, "calibration": calibration.to_json()}, b""


def embed(server: Server, request: dict, payload: bytes) -> Reply:
    from ..ranking.dense import to_blob

    texts = request["texts"]
    if not all(isinstance(t, str) for t in texts):
        raise ErrorReply("bad_request", "texts must be a list of strings")
    if request["kind"] == "query":
        data = b"".join(to_blob(server.model.embed_query(t)) for t in texts)
    else:
        data = to_blob(server.model.embed_passages(texts)) if texts else b""
    return {"model": server.model.name, "dim": server.model.dim, "count": len(texts)}, data


def search(server: Server, request: dict, payload: bytes) -> Reply:
    from ..memory.filter import Filter
    from ..model.embeddings import model_space
    from ..ranking.dense import semantic, to_blob

    try:
        where = Filter.from_json(request["filter"])
    except ValueError as exc:
        raise ErrorReply("bad_request", str(exc)) from None
    if not request["wait"] and not server.model.ready.is_set():
        raise ErrorReply(MODEL_LOADING, "the embedding model is still loading")
    returned = b""
    if request["query"] is not None:
        vector, kind = server.model.embed_query(request["query"]), "query"
    elif request["passage"] is not None:
        vector, kind = server.model.embed_passages([request["passage"]])[0], "passage"
        returned = to_blob(vector)
    else:
        raise ErrorReply("bad_request", "search needs a query or a passage")
    dim = int(vector.shape[-1])
    entries = {}

    def loader(store: str, space: str | None, dim: int):
        entries[store] = server.cache.entry(request["db"], store, space, dim)
        return entries[store].vectors

    hits = semantic(loader, where, vector, model_space(server.model.name), server.model.calibration, kind,
                    limit=request["limit"], min_score=request["min_score"])
    return {"model": server.model.name, "dim": dim, "unranked": sum(e.unranked for e in entries.values()),
            "hits": [[h.store, h.slug, h.score, h.cosine] for h in hits]}, returned


def saved(server: Server, request: dict, payload: bytes) -> Reply:
    """A client saved one memory and tells us, so the cached matrix is
    patched instead of reloaded (see cache.StoreCache.apply_saved)."""
    memory = (request["branch"], request["archived"], request["model"], payload or None, request["fields"])
    patched = server.cache.apply_saved(request["db"], request["store"], request["before"], request["after"],
                                       request["slug"], memory, request["replaced"])
    return {"patched": patched}, b""


def hook(server: Server, request: dict, payload: bytes) -> Reply:
    """Run one of the hooks the daemon was started with, for the process
    that sent it, exactly as that process would have (hot/relay.py)."""
    theirs = (request["protocol"], request["version"])
    if theirs != (PROTOCOL_VERSION, __version__):
        raise ErrorReply("mismatch", f"daemon speaks protocol {PROTOCOL_VERSION} of thatch {__version__},"
                                     f" the hook {theirs[0]} of {theirs[1]}")
    argv, env, cwd = request["argv"], request["env"], request["cwd"]
    if not argv or not all(isinstance(a, str) for a in argv) or not all(isinstance(v, str) for v in env.values()):
        raise ErrorReply("bad_request", "argv and env must hold strings")
    run = server.hooks.get(argv[0])
    if run is None:
        raise ErrorReply("bad_request", f"{argv[0]!r} is not a hook this daemon runs")
    if runtime.disabled(env) or runtime.runtime_dir(env) != server.rundir:
        raise ErrorReply("mismatch", "the hook's environment selects another daemon (or none)")
    problem = _not_portable(env, cwd, request["umask"], server.umask)
    if problem:
        raise ErrorReply(DECLINED, problem)
    answer = run(argv[1:], env, cwd, payload)
    if answer is None:
        raise ErrorReply(DECLINED, "the hook must run in its own process")
    server.answered_hook()
    return {"code": answer[0]}, answer[1]


def _not_portable(env: Mapping[str, str], cwd: str, umask: int, ours: int) -> str:
    """Why a hook of this environment, directory and umask would not run
    here as in its own process ("" when it would)."""
    if not os.path.isabs(cwd):
        return "the hook's directory is not an absolute path"
    if umask != ours:
        return "the hook's umask is not the daemon's"
    if env.get("HOME") != os.environ.get("HOME"):
        return "the hook's HOME is not the daemon's"
    relative = [name for name in PATH_VARIABLES if env.get(name) and not os.path.isabs(env[name])]
    model = env.get("THATCH_MODEL") or ""
    if model and not os.path.isabs(model) and os.path.isdir(os.path.join(cwd, os.path.expanduser(model))):
        relative.append("THATCH_MODEL")
    return f"relative {', '.join(relative)}" if relative else ""


HANDLERS: dict[str, Callable[[Server, dict, bytes], Reply]] = {
    "ping": ping, "status": status, "shutdown": shutdown, "info": info, "embed": embed, "search": search,
    "saved": saved, "hook": hook,
}


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
