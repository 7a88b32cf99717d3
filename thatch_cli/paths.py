"""Where thatch keeps its files. Every function takes the environment
explicitly so tests (and agents) can point thatch anywhere."""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Mapping


def config_home(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
    return Path(base)


def db_path(env: Mapping[str, str]) -> Path:
    # THATCH_DB_PATH is the original thatch's variable; accepting it lets both
    # tools be pointed at the same file with one setting.
    explicit = env.get("THATCH_DB") or env.get("THATCH_DB_PATH")
    if explicit:
        try:
            return Path(explicit).expanduser()
        except RuntimeError:  # ~name of a user this system does not have
            from .errors import InvalidInput

            variable = "THATCH_DB" if env.get("THATCH_DB") else "THATCH_DB_PATH"
            user = explicit[1:].split("/", 1)[0]
            raise InvalidInput(f"{variable}={explicit!r}: there is no user {user!r} for ~{user} to stand for") from None
    return config_home(env) / "thatch" / "thatch.db"


def db_is_default(env: Mapping[str, str]) -> bool:
    """Whether the database is the default file (whose directory thatch may
    create), not one named by THATCH_DB / THATCH_DB_PATH."""
    return not (env.get("THATCH_DB") or env.get("THATCH_DB_PATH"))


def cache_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(base) / "thatch"


def state_dir(env: Mapping[str, str]) -> Path:
    """Files thatch keeps between runs that are neither config nor cache:
    the agents' extraction queues, what `thatch setup` wrote."""
    base = env.get("XDG_STATE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "state")
    return Path(base) / "thatch"
