"""The daemon's runtime files and who may use them. Standard library only
(os, stat, fcntl): the shell hook imports this on every directory change.

One daemon per user and model. The user's runtime directory is found from
the user id, not only from the environment, because hosts start `thatch
mcp` and the hooks with an environment of their own (Codex and the
TypeScript MCP SDK drop XDG_RUNTIME_DIR and TMPDIR): $XDG_RUNTIME_DIR/thatch
when set, else /run/user/UID/thatch when that directory is ours (what
XDG_RUNTIME_DIR is on a Linux desktop), else a per-user folder in the
system's temporary directory (/tmp, or macOS's per-user one, which does not
depend on TMPDIR either). Each model has its own directory below it
(`model-XXXXXXXX`, from the model the settings name), so a command run with
another model (a one-off `THATCH_MODEL=... thatch recall`) uses or starts
that model's daemon and never replaces the one other shells are using;
each exits after daemon.idle without requests.

Layout of a model's directory, which (like its parent) must be a real
directory owned by us with mode 0700:

    daemon.sock   the Unix socket (0600), bound by the live daemon
    daemon.lock   flock'd exclusively by the live daemon for its whole life:
                  "is a daemon alive?" is "is this lock held?", and the
                  kernel drops it when the daemon dies, however it dies
    daemon.pid    pid, thatch version and model of the live daemon
    spawn.lock    flock'd by whoever is starting a daemon, so racing
                  commands start one process; holds the spawned pid
    daemon.log    the daemon's stdout/stderr

and in the user's directory, `hooks.daemon` (reach.py).
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from .. import __version__
from ..support import settings
from .reach import POINTER
from .reach import SOCKET as SOCKET
from .reach import unix_address as unix_address
from .reach import user_dir as user_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Mapping


LOCK = "daemon.lock"
PIDFILE = "daemon.pid"
SPAWN_LOCK = "spawn.lock"
LOG = "daemon.log"


class UnsafeRuntime(Exception):
    """The runtime directory or socket is not ours alone: never use it."""


def disabled(env: Mapping[str, str]) -> bool:
    """Whether the daemon is switched off (setting daemon.enabled). Lenient,
    as every reader here: a broken settings file means the default."""
    return not settings.value(env, "daemon.enabled", strict=False)


def idle_seconds(env: Mapping[str, str]) -> float:
    return float(settings.value(env, "daemon.idle", strict=False))


def model_key(env: Mapping[str, str]) -> str:
    """A short name for the model a command run with `env` uses (where it is loaded from)."""
    import zlib

    return f"model-{zlib.crc32(model_source(env).encode('utf-8', 'surrogatepass')):08x}"


def runtime_dir(env: Mapping[str, str]) -> str:
    """The directory of the daemon serving the model `env` selects."""
    return os.path.join(user_dir(env), model_key(env))


def check_dir(path: str) -> None:
    """Raise UnsafeRuntime unless `path` is a directory (not a symlink) owned
    by us. A mode looser than 0700 on our own directory is tightened."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeRuntime(f"{path} is not a directory")
    if st.st_uid != os.geteuid():
        raise UnsafeRuntime(f"{path} is owned by uid {st.st_uid}, not {os.geteuid()}")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)


def ensure_dir(env: Mapping[str, str]) -> str:
    """The model's runtime directory, created 0700 if missing (with the
    user's directory above it) and both checked either way."""
    path = runtime_dir(env)
    for directory in (os.path.dirname(path), path):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
        except FileNotFoundError:
            from ..support.files import make_dirs

            make_dirs(os.path.dirname(directory), 0o700)
            try:
                os.mkdir(directory, 0o700)
            except FileExistsError:
                pass
        check_dir(directory)
    return path


def check_socket(path: str) -> None:
    """Raise FileNotFoundError when absent, UnsafeRuntime when the file is
    not a socket or not ours."""
    st = os.lstat(path)
    if not stat.S_ISSOCK(st.st_mode):
        raise UnsafeRuntime(f"{path} is not a socket")
    if st.st_uid != os.geteuid():
        raise UnsafeRuntime(f"{path} is owned by uid {st.st_uid}, not {os.geteuid()}")


def expected_model(env: Mapping[str, str], *, compute: bool = True) -> str | None:
    """The identity of the model a command run with `env` uses, worked out
    without loading it (embeddings.model_identity): a daemon serves
    whoever asks for that model, wherever its folder lies. Like every
    reader here, a broken settings file means the default. With
    `compute=False` (the shell hook), None for a local folder whose
    fingerprint is not cached yet."""
    from ..model.embeddings import model_identity

    return model_identity(settings.value(env, "model", strict=False), env, compute=compute)


def model_source(env: Mapping[str, str]) -> str:
    """Where the daemon loads the model from: a local folder as an absolute
    path (the daemon runs in /), anything else as configured."""
    name = settings.value(env, "model", strict=False)
    path = os.path.expanduser(name)
    return os.path.realpath(path) if not name.startswith("fake:") and os.path.isdir(path) else name


def model_name(env: Mapping[str, str]) -> str:
    """expected_model(env), computed (fingerprinting the folder when needed)."""
    from ..model.embeddings import computed

    return computed(expected_model(env), settings.value(env, "model", strict=False))


def identity(env: Mapping[str, str]) -> dict[str, str]:
    """What a daemon must match to serve a command run with `env`."""
    return {"model": model_name(env), "version": __version__}


# -- locks -------------------------------------------------------------------


def open_lock(path: str) -> int:
    """The lock file at `path` (0600), never opened through a symlink."""
    from ..support.files import open_private

    return open_private(path)


def try_flock(fd: int, exclusive: bool = True) -> bool:
    import fcntl

    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def lock_held(rundir: str) -> bool:
    """Whether a live daemon holds daemon.lock. Probes with a shared lock that
    is dropped at once (a starting daemon retries its exclusive one)."""
    fd = open_lock(os.path.join(rundir, LOCK))
    try:
        return not try_flock(fd, exclusive=False)
    finally:
        os.close(fd)  # closing drops the probe lock


# -- the hooks' pointer (reach.py) ----------------------------------------------


def claim(rundir: str) -> None:
    """Name the daemon of `rundir` in the hooks' pointer, unless a live daemon
    of another model is named there (a one-off model's never takes it from
    the one in use; it is taken back once that one exits)."""
    user, name = os.path.split(rundir)
    pointer = os.path.join(user, POINTER)
    try:
        with open(pointer, "rb") as fh:
            current = fh.read(64).decode("ascii", "replace").strip()
    except OSError:
        current = ""
    if current == name:
        return
    if current.startswith("model-") and "/" not in current and os.path.isdir(os.path.join(user, current)):
        try:
            if lock_held(os.path.join(user, current)):
                return
        except OSError:
            pass
    from pathlib import Path

    from ..support.files import replace_atomically

    replace_atomically(Path(pointer), f"{name}\n", 0o600, durable=False)


# -- the pid file ------------------------------------------------------------


def write_pidfile(rundir: str, model: str) -> None:
    from pathlib import Path

    from ..support.files import replace_atomically

    replace_atomically(Path(rundir) / PIDFILE, f"{os.getpid()}\n{__version__}\n{model}\n", 0o600, durable=False)


def read_pidfile(rundir: str) -> dict | None:
    try:
        with open(os.path.join(rundir, PIDFILE), encoding="utf-8") as fh:
            pid, version, model = (fh.read().split("\n") + ["", "", ""])[:3]
        return {"pid": int(pid), "version": version, "model": model}
    except (OSError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped by its parent) is not alive
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


# -- starting ----------------------------------------------------------------


def spawn(env: Mapping[str, str], rundir: str, *args: str) -> int:
    """Start `python -m thatch_cli _daemon serve` detached: its own session,
    cwd /, stdin /dev/null, stdout and stderr appended to daemon.log, and
    none of our other descriptors (a shell's command-substitution pipe must
    not stay open). Uses posix_spawn, so no fork of this process and no
    subprocess import. Returns the pid."""
    from .memory import ARENAS

    child_env = {**ARENAS, **env}  # fewer malloc arenas unless the user set otherwise (daemon/memory.py)
    child_env["THATCH_MODEL"] = model_source(env)  # a relative folder must survive cwd=/
    child_env.pop("THATCH_FASTPATH", None)
    log = os.path.join(rundir, LOG)
    if os.path.islink(log):
        os.unlink(log)  # never append the daemon's output through a link, wherever it points
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    for fd in _inheritable_fds():
        actions.append((os.POSIX_SPAWN_CLOSE, fd))
    # The entry point, above the daemon, hands it the hooks it runs (hot/served.py).
    argv = [sys.executable, "-m", "thatch_cli", "_daemon", "serve", *args]
    pid = os.posix_spawn(sys.executable, argv, child_env, file_actions=actions, setsid=True)
    _reap_when_done(pid)
    return pid


def _reap_when_done(pid: int) -> None:
    """Collect the daemon's exit status when it ends, so a long-lived parent
    (an MCP server) is not left holding a zombie after the daemon exits
    idle. A short-lived parent exits first and init collects it."""
    import threading

    def wait() -> None:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:  # already collected (a client checking on its start-up)
            pass

    threading.Thread(target=wait, name=f"thatch-reap-{pid}", daemon=True).start()


def _inheritable_fds() -> list[int]:
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return []
    found = []
    for name in names:
        fd = int(name)
        if fd < 3:
            continue
        try:
            if os.get_inheritable(fd):
                found.append(fd)
        except OSError:
            pass  # the directory handle listdir used, now closed
    return found


def read_spawned(fd: int) -> int | None:
    """The pid last written into the spawn lock file (by whoever started a daemon)."""
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def write_spawned(fd: int, pid: int) -> None:
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{pid}\n".encode("ascii"), 0)
    except OSError:
        pass


# What a daemon's command line holds: spawn's, and `python -m thatch_cli.daemon serve`'s
# (earlier versions', and a daemon without the hooks).
COMMAND_MARKS = (b"thatch_cli\0_daemon\0", b"thatch_cli.daemon")


def is_daemon(pid: int) -> bool:
    """Whether pid is a thatch daemon process (never signal a reused pid)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmdline = fh.read()
    except OSError:
        return False
    return any(mark in cmdline for mark in COMMAND_MARKS)
