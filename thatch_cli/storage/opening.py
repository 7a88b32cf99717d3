"""Opening the database file, and what comes before trusting it.

- A new database appears whole: it is built under a temporary name beside
  its own (schema, write-ahead log) and hard-linked into place, so processes
  starting at once never meet a half-made file. Converting a fresh file to
  WAL while others had it open made first commands fail "database is
  locked" at once, busy timeout or not.
- A file thatch did not create, or an older thatch's, is upgraded once, in
  one write transaction, after a verified backup (backup.before_upgrade: one
  per state of the file, so a failing upgrade does not pile them up), with
  any trigger, view or index neither tool defines dropped (foreign.py).
- Before a file is trusted: it must be a regular file this user can read
  (the reason is named otherwise), its -wal and -shm must belong to its
  owner (another user's could feed it anything), and a directory other
  users can write is warned about (they could plant those files).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time

from ..support.errors import DatabaseError, database_error
from ..support.settings import LOCK_WAIT
from . import schema
from .fastread import foreign_journal

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from pathlib import Path

# How long a command waits for another process's write lock (tests shorten it).
LOCK_TIMEOUT_S = LOCK_WAIT


def open_database(path: Path | str, *, timeout: float | None = None,
                  create_parent: bool = True) -> tuple[sqlite3.Connection, bool, list[str]]:
    """Open the database, bringing its schema up to date; returns (connection,
    read_only, notices for the user). A missing file is created (its
    directory too only with `create_parent`: the default location). A file
    this process cannot write (read-only file or mount) opens read-only, as
    it is: reads work, writes fail with a clear error."""
    timeout = LOCK_TIMEOUT_S if timeout is None else timeout
    path = os.fspath(path)  # text: a light command never builds a Path (pathlib costs it ~6 ms)
    try:
        st = _stat(path)
        if st is None:
            _create(path, create_parent)
            st = os.stat(path)
        _check_file(path, st)
        notices = _shared_directory(path)
        # Before SQLite opens them (running as root, it hands them to the
        # database's owner), and again once it has: one planted in between.
        check_journals(path)
        if not _writable(path):
            return _open_read_only(path, timeout), True, notices
        conn = _open(path, timeout)
        try:
            version = _version(conn, path)
            check_journals(path)
            _refuse_newer(path, version)
            if version < schema.SCHEMA_VERSION or schema.missing_columns(conn):
                notices += _upgrade(conn, path)
            _use_wal(conn, timeout)
            conn.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            conn.close()
            raise
        return conn, False, notices
    except sqlite3.Error as exc:
        raise cannot_open(path, exc) from exc
    except OSError as exc:
        raise DatabaseError(f"cannot open database {path}: {exc.strerror or exc}") from exc


def cannot_open(path: Path | str, exc: sqlite3.Error) -> DatabaseError:
    """An SQLite error met while opening `path`, worded for the user."""
    known = database_error(exc, path)
    if known is not None and known.message != f"database error: {exc}":
        return known
    return DatabaseError(f"cannot open database {path}: {exc}")


def _stat(path: Path | str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise DatabaseError(f"cannot open database {path}: it is a symbolic link to {os.readlink(path)},"
                                " which does not exist") from None
        return None


def not_a_file(path: Path | str, st: os.stat_result) -> DatabaseError | None:
    """The error for a database path that is not a regular file (a
    directory, a FIFO, a device), or None."""
    if stat.S_ISREG(st.st_mode):
        return None
    kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or \
        stat.S_ISBLK(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "not a regular file"
    return DatabaseError(f"cannot open database {path}: it is {kind}, not a database file"
                         " (point THATCH_DB at a file)")


def _check_file(path: Path | str, st: os.stat_result) -> None:
    problem = not_a_file(path, st)
    if problem is not None:
        raise problem
    if not os.access(path, os.R_OK):
        raise DatabaseError(f"cannot open database {path}: permission denied (it belongs to {_owner(st.st_uid)},"
                            f" mode {stat.S_IMODE(st.st_mode):04o})")


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (KeyError, ImportError):
        return f"uid {uid}"


def _shared_directory(path: Path | str) -> list[str]:
    """A warning when other users can write the directory the database (after
    any symlink) lies in: they could plant its -wal or -shm file."""
    folder, name = os.path.split(os.path.realpath(path))
    st = os.stat(folder)
    others = st.st_mode & 0o002 or (st.st_mode & 0o020 and st.st_gid != os.getegid())
    if not others:
        return []
    return [(f"warning: {folder} is writable by other users, who could plant a {name}-wal file there and change"
             " what thatch reads; keep the database in a directory only you can write")]


def check_journals(path: Path | str) -> None:
    """Refuse a database whose -wal or -shm (opened by SQLite with the file)
    belongs to a user other than the database's owner and us."""
    problem = foreign_journal(path)
    if problem is not None:
        raise DatabaseError(f"refusing to open {path}: {problem}; another user may have planted it to change what"
                            " thatch reads (remove it once nothing has the database open)")


def _create(path: Path | str, create_parent: bool) -> None:
    """Make a new, empty thatch database at `path`, whole: built under a
    temporary name and linked into place (a process that created it first
    wins; theirs is as good)."""
    import errno
    import tempfile
    from pathlib import Path

    path = Path(path)

    if not path.parent.is_dir():
        if not create_parent:
            raise DatabaseError(f"cannot create database {path}: directory {path.parent} does not exist"
                                " (create it, or point THATCH_DB elsewhere)")
        from ..support.files import make_dirs

        make_dirs(path.parent, 0o700)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".new", dir=path.parent)
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
            schema.migrate(conn, 0)
            conn.execute("COMMIT")
        finally:
            conn.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                raise
            _create_empty(path)  # no hard links on this file system: the open converts it
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(tmp + suffix)
            except FileNotFoundError:
                pass


def _create_empty(path: Path) -> None:
    from ..support.files import create_exclusive

    try:
        create_exclusive(path)
    except FileExistsError:
        pass


def _open(path: Path | str, timeout: float) -> sqlite3.Connection:
    # Autocommit mode: every write path opens its own explicit transaction.
    conn = sqlite3.connect(path, isolation_level=None, timeout=timeout, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
    return conn


def _writable(path: Path | str) -> bool:
    """Whether this process may write the file and create its journal files
    beside it (False on a read-only file or mount)."""
    return os.access(path, os.W_OK) and os.access(os.path.dirname(os.path.abspath(path)), os.W_OK | os.X_OK)


def _version(conn: sqlite3.Connection, path: Path | str) -> int:
    try:
        return schema.schema_version(conn)
    except schema.UnreadableVersion as exc:
        raise DatabaseError(f"{path} has an unreadable thatch schema version ({exc}) in thatch_cli_meta; nothing"
                            " was changed (restore a backup with 'thatch restore', or correct the value)") from None


def _use_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch the file to the write-ahead log, retrying while other
    processes have it open (the switch needs them gone for a moment, and
    SQLite does not wait for that on its own)."""
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
        return
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.1)


def _upgrade(conn: sqlite3.Connection, path: Path | str) -> list[str]:
    """Bring the schema up to date in one transaction; returns notices. A
    file that already holds data (the original's, or an older thatch's) is
    first copied to a verified backup beside it; if that fails nothing is
    changed."""
    from . import backup, foreign

    conn.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have upgraded while we waited for the lock.
        current = _version(conn, path)
        if current >= schema.SCHEMA_VERSION and not schema.missing_columns(conn):
            conn.execute("COMMIT")
            return []
        kept = None
        where = f"{path} (schema {current} to {schema.SCHEMA_VERSION})"
        if schema.holds_data(conn):
            # The backup reads through its own connection while ours holds
            # the write lock, so it is exactly the state being migrated.
            try:
                from pathlib import Path

                kept = backup.before_upgrade(Path(path), schema.SCHEMA_VERSION)
            except backup.BackupFailed as exc:
                raise DatabaseError(f"not upgrading {where}: {exc}; nothing was changed") from None
        if current >= 4:
            # History triggers follow the fields (a field added since is
            # copied too): an older definition of ours is not foreign.
            schema.refresh_history(conn)
        found = foreign.find(conn)
        try:
            foreign.strip(conn, found)
            schema.migrate(conn, current)
            foreign.restore_own(conn)
        except sqlite3.Error as exc:
            if "locked" in str(exc):
                raise
            raise DatabaseError(f"not upgrading {where}: {exc}; nothing was changed"
                                + (f" (a verified backup is at {kept})" if kept else "")) from None
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    notices = []
    if found:
        notices.append(f"removed what neither thatch nor the original thatch defines from {path}: {found.describe()}"
                       + (f" (the backup {kept} still holds them)" if kept else ""))
    if found.tables:
        notices.append(f"{path} holds tables thatch does not know, kept as they are: {', '.join(found.tables)}")
    return notices


def _open_read_only(path: Path | str, timeout: float) -> sqlite3.Connection:
    from pathlib import Path

    from .fastread import open_readonly

    conn = open_readonly(Path(path), timeout, check_same_thread=False)
    if conn is None:
        check_journals(path)
        raise DatabaseError(f"cannot open database {path} read-only (a write-ahead log beside it"
                            " needs a writable directory to be read)")
    try:
        conn.isolation_level = None
        _refuse_newer(path, _version(conn, path))
        check_journals(path)
    except BaseException:
        conn.close()
        raise
    return conn


def connect_existing(path: Path | str, *, timeout: float = 10.0) -> sqlite3.Connection:
    """Open a database that is already a thatch database at this schema,
    creating and migrating nothing (the daemon opens files named by its
    clients, and must never turn an arbitrary file into a thatch database)."""
    from pathlib import Path

    path = Path(path)
    try:
        if not path.is_file():
            raise DatabaseError(f"no thatch database at {path}")
        check_journals(path)
        conn = _open(path, timeout) if _writable(path) else _open_read_only(path, timeout)
        try:
            version = _version(conn, path)
            check_journals(path)
            if version != schema.SCHEMA_VERSION:
                raise DatabaseError(f"{path} is not a thatch database of schema {schema.SCHEMA_VERSION}"
                                    f" (found {version})")
        except BaseException:
            conn.close()
            raise
        return conn
    except sqlite3.Error as exc:
        raise cannot_open(path, exc) from exc
    except OSError as exc:
        raise DatabaseError(f"cannot open database {path}: {exc.strerror or exc}") from exc


def _refuse_newer(path: Path | str, version: int) -> None:
    if version > schema.SCHEMA_VERSION:
        raise DatabaseError(f"{path} was written by a newer thatch (schema {version}); upgrade thatch to use it")


def file_version(path: Path) -> int:
    """The thatch schema version of a database file (0: the original's or an
    older format), read without changing it. DatabaseError when unreadable."""
    from .fastread import connect_readonly

    conn = connect_readonly(path)
    try:
        return _version(conn, path)
    finally:
        conn.close()
