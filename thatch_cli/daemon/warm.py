"""Warming the daemon from the shell hook, when the user enters a
repository whose store has memories with vectors: by the time they ask
something, the model is loaded. Setting daemon.warm (THATCH_WARM) turns it off.

maybe_warm costs a handful of syscalls when the daemon is up (a lock probe,
reading the pid file), never waits for anything, never hashes a model folder,
imports no model code or numpy, and never raises.
"""

from __future__ import annotations

import os
import time

from .. import __version__
from ..support import settings
from . import runtime

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Mapping

FAILED = "model.failed"  # written by a daemon whose model would not load
FAILED_BACKOFF = 600.0  # seconds the hook waits before trying that model again


def maybe_warm(env: Mapping[str, str]) -> None:
    """Start the daemon in the background unless it is running with the
    right model and version, is being started, or is disabled."""
    try:
        _maybe_warm(env)
    except (Exception, KeyboardInterrupt):
        pass


def _maybe_warm(env: Mapping[str, str]) -> None:
    if runtime.disabled(env) or not settings.value(env, "daemon.warm", strict=False):
        return
    rundir = runtime.runtime_dir(env)
    try:
        runtime.check_dir(rundir)
    except FileNotFoundError:
        rundir = runtime.ensure_dir(env)
    # Never fingerprint a model folder here: the daemon it starts does that.
    model = runtime.expected_model(env, compute=False)
    running = None
    if runtime.lock_held(rundir):
        running = runtime.read_pidfile(rundir)
        if running is None or model is None or (running["model"] == model and running["version"] == __version__):
            return  # serving us (as far as a prompt can tell without hashing), or still starting
    if _recently_failed(rundir, model):
        return
    fd = runtime.open_lock(os.path.join(rundir, runtime.SPAWN_LOCK))
    try:
        if not runtime.try_flock(fd):
            return  # someone is starting one right now
        spawned = runtime.read_spawned(fd)
        if (spawned is not None and spawned != (running or {}).get("pid") and runtime.pid_alive(spawned)
                and runtime.is_daemon(spawned)):
            return  # one we (or a command) started is still coming up
        pid = runtime.spawn(env, rundir)  # replaces an older thatch's daemon for this model
        runtime.write_spawned(fd, pid)
    finally:
        os.close(fd)


def _recently_failed(rundir: str, model: str | None) -> bool:
    path = os.path.join(rundir, FAILED)
    try:
        if time.time() - os.stat(path).st_mtime > FAILED_BACKOFF:
            return False
        with open(path, encoding="utf-8") as fh:
            return fh.readline().rstrip("\n") == model
    except OSError:
        return False
