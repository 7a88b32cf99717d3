"""The agent hooks' deadline (THATCH_HOOK_DEADLINE seconds, default 1.5),
counted from when the process started, the largest payload they read, and
the one write of their answer.
Standard library `os` and `time` only: the thin client of hot/relay.py
uses both."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Mapping

DEFAULT_DEADLINE = 1.5
# A batch of tool calls with their outputs can be large; anything beyond
# this is not a payload we should parse on the user's time.
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024


def deadline(env: Mapping[str, str]) -> float:
    try:
        value = float(env.get("THATCH_HOOK_DEADLINE") or DEFAULT_DEADLINE)
    except ValueError:
        return DEFAULT_DEADLINE
    return min(max(value, 0.05), 30.0)


def since_start() -> float:
    """Seconds since this process started: its start time in /proc (clock
    ticks since boot) against the boot-time clock. 0 where that cannot be
    read (not Linux)."""
    import time

    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22, starttime
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def remaining(env: Mapping[str, str]) -> float:
    """Seconds left before this process's hook must have answered."""
    return max(0.0, deadline(env) - since_start())


def write_answer(data: bytes) -> None:
    """All of `data` to stdout (fd 1), unbuffered; a reader that went away is no error."""
    try:
        while data:
            data = data[os.write(1, data):]
    except OSError:
        pass
