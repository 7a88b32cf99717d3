"""What reached which agent session (`thatch activity`), and pausing every
injection (`thatch pause` / `thatch resume`).

The record is a JSON-lines file in thatch's state directory, not a table:
the hooks that write it must not open the database for writing (a prompt
hook never waits on a lock), and a line appended with O_APPEND is one cheap
write. It is private (the file 0600, its directory 0700) and bounded: past
MAX_BYTES the file becomes `activity.1.jsonl` (the one before is dropped),
so at most twice MAX_BYTES are kept. Recording never raises: a hook that
cannot write its line still answers. The `activity.enabled` setting turns
recording off.

The pause is a small JSON file in the same directory ({"global": bool,
"stores": [...]}); each hook reads it once (one failed open when nothing is
paused). Standard library only: the hot paths import this.
"""

from __future__ import annotations

import json
import os

from ..support import paths

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Any, Iterable, Mapping

FILE = "activity.jsonl"
OLDER = "activity.1.jsonl"
PAUSE_FILE = "paused.json"
MAX_BYTES = 256 * 1024
MAX_ITEMS = 20  # per entry: an injection lists a handful; a runaway one is not worth keeping whole
MAX_TEXT = 200  # characters of a label, store, host or session kept


def _dir(env: Mapping[str, str]) -> str:
    return str(paths.state_dir(env))


def _private_dir(env: Mapping[str, str]) -> str:
    folder = _dir(env)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def _cut(value: object) -> str | None:
    return None if value is None else str(value)[:MAX_TEXT]


def enabled(env: Mapping[str, str]) -> bool:
    from ..support.settings import value

    return bool(value(env, "activity.enabled", strict=False))


def record(env: Mapping[str, str], event: str, host: str | None, session: str | None,
           items: Iterable[tuple[str, str | None, float | None]], store: str | None = None) -> None:
    """Append one entry: `items` are (label, store, score or None). Never raises."""
    try:
        if not enabled(env):
            return
        import time

        entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "host": _cut(host),
                 "session": _cut(session), "event": event, "store": _cut(store),
                 "items": [{"label": _cut(label), "store": _cut(where),
                            "score": None if score is None else round(float(score), 3)}
                           for label, where, score in list(items)[:MAX_ITEMS]]}
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8", "replace")
        folder = _private_dir(env)
        file = os.path.join(folder, FILE)
        try:
            if os.stat(file).st_size + len(line) > MAX_BYTES:
                os.replace(file, os.path.join(folder, OLDER))
        except FileNotFoundError:
            pass
        fd = os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except Exception:
        if env.get("THATCH_DEBUG"):
            raise


def entries(env: Mapping[str, str], session: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """The entries kept, oldest first (the last `limit`), of `session` when given; unreadable lines are skipped."""
    found: list[dict[str, Any]] = []
    for name in (OLDER, FILE):
        try:
            with open(os.path.join(_dir(env), name), encoding="utf-8", errors="replace") as fh:
                lines = fh.readlines()
        except OSError:
            continue
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and (session is None or entry.get("session") == session):
                found.append(entry)
    return found[-limit:] if limit else found


def _pause_state(env: Mapping[str, str]) -> dict[str, Any]:
    try:
        with open(os.path.join(_dir(env), PAUSE_FILE), encoding="utf-8") as fh:
            state = json.load(fh)
    except (OSError, ValueError):
        return {"global": False, "stores": []}
    if not isinstance(state, dict):
        return {"global": False, "stores": []}
    stores = state.get("stores")
    return {"global": state.get("global") is True,
            "stores": [s for s in stores if isinstance(s, str)] if isinstance(stores, list) else []}


def paused(env: Mapping[str, str], store: str | None) -> str | None:
    """"global" or "store" when injections are paused for `store`, else None."""
    state = _pause_state(env)
    if state["global"]:
        return "global"
    return "store" if store is not None and store in state["stores"] else None


def set_paused(env: Mapping[str, str], store: str | None, on: bool) -> dict[str, Any]:
    """Pause (on) or resume injections for `store`, or everywhere when `store` is None; the new state."""
    state = _pause_state(env)
    if store is None:
        state["global"] = on
    elif on and store not in state["stores"]:
        state["stores"].append(store)
    elif not on:
        state["stores"] = [s for s in state["stores"] if s != store]
    folder = _private_dir(env)
    file = os.path.join(folder, PAUSE_FILE)
    temp = f"{file}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(state, fh)
    os.replace(temp, file)
    return state
