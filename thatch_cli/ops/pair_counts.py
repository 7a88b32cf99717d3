"""The last near-duplicate count of each store, for the session-start
reminder: it cannot compare vectors within its time budget, so `thatch
duplicates`, `thatch hygiene` and their MCP tools leave their count here,
with the store's change counter, and the reminder shows it only as "as of"
once the store has changed since.

Standard library only (the reminder hook reads it); a cache, so a failed
write is ignored and a missing or unreadable file means "not counted yet".
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Mapping

FILE = "pair-counts.json"
MAX_STORES = 200


def _path(env: Mapping[str, str]) -> Path:
    from ..support.paths import cache_dir

    return cache_dir(env) / FILE


def _key(db_path: Path, store: str) -> str:
    return f"{os.path.abspath(db_path)}\t{store}"


def record(env: Mapping[str, str], db_path: Path, store: str, version: int, pairs: int, checked_at: str) -> None:
    from ..support.files import read_json_object, write_json_cache

    path = _path(env)
    data = read_json_object(path)
    data[_key(db_path, store)] = {"pairs": pairs, "version": version, "checked_at": checked_at}
    if len(data) > MAX_STORES:  # the oldest checks go first
        for key in sorted(data, key=lambda k: str(data[k].get("checked_at")))[: len(data) - MAX_STORES]:
            del data[key]
    write_json_cache(path, data)


def lookup(env: Mapping[str, str], db_path: Path, store: str) -> dict | None:
    """{"pairs", "version", "checked_at"} of the store's last count, or None."""
    from ..support.files import read_json_object

    found = read_json_object(_path(env)).get(_key(db_path, store))
    return found if isinstance(found, dict) and isinstance(found.get("pairs"), int) else None
