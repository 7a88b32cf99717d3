"""Errors a user can cause, each with its documented exit code.

Anything raised as a ThatchError is reported as one line (or one JSON
object) and never as a traceback.
"""

from __future__ import annotations

# Exit codes (documented in README "Exit codes"); keep them stable for agents.
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_CONFLICT = 4
EXIT_ATTENTION = 5
EXIT_DATABASE = 6
EXIT_RETRY = 7


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


class ModelUnavailable(ThatchError):
    """The embedding model could not be loaded; callers degrade, never lose data."""

    code = "model_unavailable"


def database_error(exc: BaseException) -> DatabaseError | None:
    """The database error an SQLite exception means (locked, read-only,
    corrupt), or None for anything else."""
    import sqlite3

    if not isinstance(exc, sqlite3.Error):
        return None
    text = str(exc)
    if "locked" in text or "busy" in text:
        return DatabaseError("database is locked by another process; try again", retryable=True)
    if "readonly" in text:
        return DatabaseError("the database is read-only (file or mount); this command needs to write to it")
    return DatabaseError(f"database error: {text}")
