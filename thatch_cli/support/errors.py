"""Errors a user can cause, each with its documented exit code.

Anything raised as a ThatchError is reported as one line (or one JSON
object) and never as a traceback.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from os import PathLike

# Exit codes (documented in README "Exit codes"); keep them stable for agents.
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_CONFLICT = 4
EXIT_ATTENTION = 5
EXIT_DATABASE = 6
EXIT_RETRY = 7
EXIT_REFUSED = 8


class ThatchError(Exception):
    exit_code = EXIT_INTERNAL
    code = "error"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_json(self) -> dict:
        """The `error` object of --json output (and of MCP tool errors)."""
        extra = {k: v if isinstance(v, (str, int, float, bool, type(None), list)) else str(v)
                 for k, v in self.details.items()}
        return {"code": self.code, "message": self.message, "exit_code": self.exit_code, **extra}


class InvalidInput(ThatchError):
    exit_code = EXIT_USAGE
    code = "invalid_input"


class UsageError(InvalidInput):
    """A command line Typer could not parse (unknown option, missing argument ...)."""

    code = "usage"


class NotFound(ThatchError):
    exit_code = EXIT_NOT_FOUND
    code = "not_found"


class Conflict(ThatchError):
    exit_code = EXIT_CONFLICT
    code = "conflict"


class DatabaseError(ThatchError):
    exit_code = EXIT_DATABASE
    code = "database"


class Unavailable(ThatchError):
    """Nothing is wrong, but it cannot be done now (a remote out of reach,
    another sync running): nothing was lost; try again later."""

    exit_code = EXIT_RETRY
    code = "unavailable"


class Refused(ThatchError):
    """The remote does not accept this machine's credentials: trying again
    will not help until they are fixed; nothing was lost."""

    exit_code = EXIT_REFUSED
    code = "refused"


class DiskFull(ThatchError):
    """No space left where a write had to go; nothing was lost."""

    exit_code = EXIT_DATABASE
    code = "disk_full"


class ModelUnavailable(ThatchError):
    """The embedding model could not be loaded; callers degrade, never lose data."""

    code = "model_unavailable"


def database_error(exc: BaseException, path: str | PathLike[str] | None = None) -> DatabaseError | None:
    """The database error an SQLite exception means (locked, read-only, a
    full disk, corrupt), or None for anything else. `path` (the database)
    lets a full disk be told apart from other I/O errors: SQLite says "disk
    I/O error" when it cannot even create the -shm file."""
    import sqlite3

    if not isinstance(exc, sqlite3.Error):
        return None
    text = str(exc)
    if "locked" in text or "busy" in text:
        return DatabaseError("database is locked by another process; try again", retryable=True)
    if "readonly" in text:
        return DatabaseError("the database is read-only (file or mount); this command needs to write to it")
    if "full" in text or (("I/O error" in text or "unable to open" in text) and path is not None and disk_full(path)):
        where = f" holding {path}" if path is not None else ""
        return DatabaseError(f"no space left on the disk{where} ({text}); free some space and try again;"
                             " nothing was changed")
    return DatabaseError(f"database error: {text}")


def disk_full(path: str | PathLike[str]) -> bool:
    """Whether the file system holding `path` (a file or directory) has no
    space left for this user."""
    import os

    folder = os.fspath(path)
    try:
        if not os.path.isdir(folder):
            folder = os.path.dirname(os.path.realpath(folder)) or "."
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


def os_error(exc: OSError, what: str) -> ThatchError:
    """An OSError writing `what` (a file the user named): a full disk or
    another fault of the device is exit 6, a path the user cannot write
    (missing, permission, a directory ...) exit 2."""
    import errno

    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG):
        return DatabaseError(f"cannot write {what}: {reason}")
    return InvalidInput(f"cannot write {what}: {reason}")
