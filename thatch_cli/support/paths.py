"""Where thatch keeps its files. Every function takes the environment
explicitly so tests (and agents) can point thatch anywhere."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path


def _path(text: str) -> Path:
    from pathlib import (
        Path,  # on first use: a light command never builds one (pathlib costs it ~6 ms)
    )

    return Path(text)


def _config_base(env: Mapping[str, str]) -> str:
    return env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")


def config_home(env: Mapping[str, str]) -> Path:
    return _path(_config_base(env))


def db_file(env: Mapping[str, str]) -> str:
    """The database file, as text: light commands open it without pathlib."""
    # THATCH_DB_PATH is the original thatch's variable; accepting it lets both
    # tools be pointed at the same file with one setting.
    explicit = env.get("THATCH_DB") or env.get("THATCH_DB_PATH")
    if explicit:
        expanded = os.path.expanduser(explicit)
        if expanded.startswith("~"):  # ~name of a user this system does not have
            from .errors import InvalidInput

            variable = "THATCH_DB" if env.get("THATCH_DB") else "THATCH_DB_PATH"
            user = explicit[1:].split("/", 1)[0]
            raise InvalidInput(f"{variable}={explicit!r}: there is no user {user!r} for ~{user} to stand for")
        return expanded
    return os.path.join(_config_base(env), "thatch", "thatch.db")


def db_path(env: Mapping[str, str]) -> Path:
    return _path(db_file(env))


def db_is_default(env: Mapping[str, str]) -> bool:
    """Whether the database is the default file (whose directory thatch may
    create), not one named by THATCH_DB / THATCH_DB_PATH."""
    return not (env.get("THATCH_DB") or env.get("THATCH_DB_PATH"))


def _cache_base(env: Mapping[str, str]) -> str:
    return env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")


def cache_dir(env: Mapping[str, str]) -> Path:
    return _path(_cache_base(env)) / "thatch"


def cache_file(env: Mapping[str, str], name: str) -> str:
    """A file of thatch's cache directory, as text (for light commands)."""
    return os.path.join(_cache_base(env), "thatch", name)


def state_dir(env: Mapping[str, str]) -> Path:
    """Files thatch keeps between runs that are neither config nor cache:
    the agents' extraction queues, what `thatch setup` wrote."""
    base = env.get("XDG_STATE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return _path(base) / "thatch"

