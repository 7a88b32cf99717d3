"""Small files: the package's templates and its exported CLI spec,
replacing files safely, lock files, and the JSON files thatch keeps as
caches and state."""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import IO, Any, Iterator

# The package's directory, found from this module's dotted name so that it
# holds wherever in the package this module lies.
PACKAGE_DIR = Path(__file__).resolve().parents[__name__.count(".") - 1]
def template(relative: str) -> str:
    """Text of templates/<relative> (shell, git and completion scripts are
    data files in the package, not strings in the code)."""
    return (PACKAGE_DIR / "templates" / relative).read_text(encoding="utf-8")


@contextmanager
def atomic_writer(path: Path, mode: int, *, durable: bool = True, binary: bool = False) -> Iterator[IO[Any]]:
    """A text file to fill that appears at `path` only when complete: the
    bytes go to a temporary file beside `path` (an unpredictable name,
    created with O_EXCL and O_NOFOLLOW, so a symlink planted in a shared
    directory is never followed), are flushed to disk, and the file is then
    renamed over `path` (replacing a symlink there, never its target). A
    reader (git running a hook, a shell loading completions, a concurrent
    thatch) sees the old file or the new one, never half of one. On any
    error no temporary file is left behind and `path` is untouched.
    `durable=False` skips the flush to disk, for files that can be rebuilt
    (caches, run-time files), which hot paths write; `binary` takes bytes."""
    import tempfile  # only writers pay for it; hot paths mostly read

    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")) as fh:
            yield fh
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def create_exclusive(path: Path) -> None:
    """Create `path` empty and private (0600); FileExistsError when anything,
    a symlink included, is already there (never followed)."""
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600))


def replace_atomically(path: Path, text: str, mode: int, *, durable: bool = True) -> None:
    """Write `text` to `path` through atomic_writer. Raises OSError and
    leaves no temporary file behind."""
    with atomic_writer(path, mode, durable=durable) as fh:
        fh.write(text)


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object stored at `path`, or {} when the file is missing,
    unreadable, malformed or holds something else: these files are caches
    and state thatch can rebuild, never a reason to fail."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def make_dirs(path: Path | str, mode: int = 0o700) -> None:
    """Create the directory `path` and every missing parent with `mode`
    (0700 for thatch's own directories, 0755 where another program reads
    them). os.makedirs and Path.mkdir give the parents the umask's default,
    0777 under umask 000: a directory anyone could plant files in."""
    path = Path(path)
    missing = []
    while not path.is_dir() and path.parent != path:
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, mode)
        except FileExistsError:
            if not directory.is_dir():
                raise


def private_dir(path: Path | str) -> None:
    """One of thatch's own directories (state, queue, cache): made 0700 with
    its parents as needed, and tightened to 0700 if it exists more open."""
    make_dirs(path, 0o700)
    st = os.stat(path)
    if st.st_mode & 0o077 and st.st_uid == os.geteuid():
        os.chmod(path, 0o700)


def open_private(path: Path | str, flags: int = os.O_RDWR) -> int:
    """A descriptor on a file in one of thatch's private directories (a lock,
    a log), created 0600 as needed and never through a symlink: a link
    found at that name (nothing thatch makes) is removed and a real file
    created in its place."""
    flags |= os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        return os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
    os.unlink(path)
    return os.open(path, flags | os.O_EXCL, 0o600)


def write_json_cache(path: Path, data: Any) -> None:
    """Store `data` at `path` as JSON (see write_cache)."""
    import json

    write_cache(path, json.dumps(data))


def write_cache(path: Path | str, text: str) -> None:
    """Store `text` at `path` (0600, in a 0700 directory made as needed),
    atomically; a failure is ignored, as for any cache (last writer wins)."""
    path = Path(path)
    try:
        make_dirs(path.parent, 0o700)
        replace_atomically(path, text, 0o600, durable=False)
    except OSError:
        pass


def acquire_lock(path: Path | str, seconds: float) -> int:
    """A descriptor holding an exclusive lock on `path` (a 0600 file, created
    if need be, never through a symlink), waiting up to `seconds` for
    whoever holds it: TimeoutError past that. Closing the descriptor
    releases the lock."""
    import fcntl
    import time

    fd = open_private(path)
    deadline = time.monotonic() + seconds
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{path} stayed locked") from None
                time.sleep(0.005)
    except BaseException:
        os.close(fd)
        raise
