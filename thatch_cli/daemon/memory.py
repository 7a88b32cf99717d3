"""Keeping the daemon's resident memory near what it holds.

Encoding a batch (a reindex, an import) allocates activations of tens of
megabytes that glibc's malloc keeps after they are freed, and every thread
that allocates gets an arena of its own: left alone, a daemon that once
embedded a thousand passages stays ~100 MB above its working size for the
rest of its life. So the daemon is started with at most two malloc arenas,
and gives its free heap pages back to the system after each request
(malloc_trim costs ~0.2 ms, after the reply is sent).

Importing torch and its companions also touches ~110 MB of their shared
libraries' code that only runs once (module set-up, operator registration).
Once the model is built, those pages are handed back (madvise
MADV_PAGEOUT); the warm-up encode that follows brings back the ~25 MB that
encoding runs, so the refaults cost the start-up, not a request.

Elsewhere than glibc on Linux 5.4 or later, each of these is a no-op."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing when a hook spawns the daemon
if TYPE_CHECKING:
    from typing import Callable

# Set in the daemon's environment when it is spawned (malloc reads it at start).
ARENAS = {"MALLOC_ARENA_MAX": "2"}

_trim: Callable[[int], int] | bool | None = None  # malloc_trim once looked up; False where there is none
MADV_PAGEOUT = 21  # linux/mman.h


def _libc():
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL("libc.so.6")  # glibc on Linux, without find_library running ldconfig
    except OSError:
        return ctypes.CDLL(ctypes.util.find_library("c"))


def trim() -> None:
    """Return the heap's free pages to the system, where malloc can."""
    global _trim
    if _trim is None:
        try:
            _trim = _libc().malloc_trim
        except (OSError, AttributeError):
            _trim = False
    if callable(_trim):
        _trim(0)


def page_out_libraries() -> int:
    """Ask the kernel to drop the resident pages of every mapped shared
    library (they are read back from the page cache if used again);
    returns how many mappings it accepted."""
    import ctypes  # here, not above: spawning a daemon (the shell hook) imports ARENAS only

    try:
        madvise = _libc().madvise
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            maps = fh.readlines()
    except (OSError, AttributeError):
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    accepted = 0
    for line in maps:
        fields = line.split(maxsplit=5)
        path = fields[5].strip() if len(fields) == 6 else ""
        if fields[4] == "0" or not (path.endswith(".so") or ".so." in path):
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        accepted += madvise(start, end - start, MADV_PAGEOUT) == 0
    return accepted
