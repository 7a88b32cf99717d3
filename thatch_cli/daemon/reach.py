"""How a hook reaches the daemon that runs it for its process (hot/relay.py),
with os and stat only (nothing else is imported: every prompt pays for it):
the user's runtime directory, the socket's name and an address for it, the
protocol's version, and the hooks' pointer.

The pointer, `hooks.daemon` in the user's runtime directory, names the model
directory whose live daemon runs the agent hooks. A hook then finds that
daemon's socket with a few system calls, without reading settings or working
out the model they select; the daemon checks that the hook's environment does
select it (handlers.hook) and refuses it otherwise. A daemon that runs hooks
writes it when it starts, and every few seconds while no live daemon is named
there (runtime.claim, server.py).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Mapping

# Changing a message's shape (protocol.py) means bumping this.
PROTOCOL_VERSION = 9
# What a request may carry besides its header: one vector, or a hook's stdin.
MAX_REQUEST_PAYLOAD = 1024 * 1024
SOCKET = "daemon.sock"
POINTER = "hooks.daemon"


def user_dir(env: Mapping[str, str]) -> str:
    """The user's thatch runtime directory (the daemons' parent), the same
    whichever of XDG_RUNTIME_DIR's usual value a host passes on or drops."""
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "thatch")
    uid = os.getuid()
    run_user = f"/run/user/{uid}"
    try:
        st = os.stat(run_user)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == uid:
            return os.path.join(run_user, "thatch")
    except OSError:
        pass
    return os.path.join(_temp_root(), f"thatch-{uid}")


def _temp_root() -> str:
    """The system's temporary directory, not TMPDIR's (a host may drop it):
    macOS's per-user one (confstr), else /tmp."""
    name = "CS_DARWIN_USER_TEMP_DIR"
    if name in getattr(os, "confstr_names", {}):
        try:
            found = os.confstr(name)
        except (OSError, ValueError):
            found = None
        if found:
            return found.rstrip("/")
    return "/tmp"


# sun_path holds 108 bytes on Linux, 104 on macOS, terminator included.
_SUN_PATH_MAX = 100


class unix_address:
    """A path bind() and connect() accept for the socket at `path`. A deep
    runtime directory (a long XDG_RUNTIME_DIR or TMPDIR) can exceed what an
    AF_UNIX address holds; on Linux the directory is then reached through an
    open descriptor's /proc/self/fd link, which is short."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> str:
        if len(os.fsencode(self.path)) <= _SUN_PATH_MAX or not os.path.isdir("/proc/self/fd"):
            return self.path
        folder, name = os.path.split(self.path)
        self._fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        return f"/proc/self/fd/{self._fd}/{name}"

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _private_dir(path: str) -> bool:
    """Whether `path` is a real directory of ours with mode 0700 (checked, never tightened)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) == 0o700


def pointed_socket(env: Mapping[str, str]) -> str | None:
    """The socket of the daemon the hooks' pointer names, when it and the
    directories above it are ours alone (dirs 0700, socket 0600); else None.
    A few system calls: no settings read, no model worked out. The daemon
    checks that the hook's environment selects it (handlers.hook)."""
    user = user_dir(env)
    if not _private_dir(user):  # first: nobody else can have put the pointer there (a FIFO would hang us)
        return None
    try:
        fd = os.open(os.path.join(user, POINTER), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            name = os.read(fd, 64).decode("ascii").strip()
        finally:
            os.close(fd)
    except (OSError, UnicodeDecodeError):
        return None
    if not name.startswith("model-") or "/" in name:
        return None
    folder = os.path.join(user, name)
    path = os.path.join(folder, SOCKET)
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not (_private_dir(folder) and stat.S_ISSOCK(st.st_mode) and st.st_uid == os.geteuid()
            and stat.S_IMODE(st.st_mode) & 0o077 == 0):
        return None
    return path
