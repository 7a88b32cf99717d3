"""How many earlier versions of each memory the history keeps: the
`history.keep` setting (THATCH_HISTORY_KEEP, else the settings file, else
10). The storage layer records the value in the database, where the
history triggers apply it to every writer."""

from __future__ import annotations

from typing import Mapping

from . import settings


def history_keep(env: Mapping[str, str]) -> int:
    """Versions kept per memory (0 keeps no history)."""
    return settings.value(env, "history.keep")
