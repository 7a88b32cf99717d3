"""How many earlier versions of each memory the history keeps.

`history_keep(env)` is the one place the setting is read (today the
THATCH_HISTORY_KEEP environment variable; a settings file can feed it
later). The storage layer records the value in the database, where the
history triggers apply it to every writer."""

from __future__ import annotations

from typing import Mapping

from . import validate
from .storage.history import DEFAULT_KEEP

ENV_VAR = "THATCH_HISTORY_KEEP"


def history_keep(env: Mapping[str, str]) -> int:
    """Versions kept per memory: THATCH_HISTORY_KEEP, else DEFAULT_KEEP (0 keeps no history)."""
    raw = (env.get(ENV_VAR) or "").strip()
    return DEFAULT_KEEP if not raw else validate.history_keep(raw, ENV_VAR)
