"""Hybrid logical clock stamps, which order concurrent edits of a memory.

A stamp is `PPPPPPPPPPPPP.CCCCC.NODE`: milliseconds since the epoch, a
counter, and the id of the database that issued it; stamps compare as
(milliseconds, counter, node), which the fixed widths make the text order
too. Every stamp issued is later than every stamp this database has seen,
so a machine whose clock runs ahead wins a conflict only until the others
have seen its stamps: their next edits are stamped after it. A stamp more
than MAX_AHEAD_MS ahead of this machine's clock is refused at import, and
no stamp this clock issues leaves the format.
"""

from __future__ import annotations

import re
from typing import Self

_STAMP = re.compile(r"^(\d{13})\.(\d{5})\.([0-9a-z]{1,32})$")
_MAX_COUNTER = 99_999
_MAX_MILLIS = 10**13 - 1  # the format's 13 digits (the year 2286)
# How far ahead of this machine's clock an imported stamp may be: a
# teammate's clock a few hours off is taken, a stamp from the far future
# (which would win every later conflict, and push this clock out of the
# format) is refused.
MAX_AHEAD_MS = 24 * 3600 * 1000


class Stamp(tuple):
    """(milliseconds, counter, node)."""

    __slots__ = ()

    def __new__(cls, millis: int, counter: int, node: str) -> Self:
        return super().__new__(cls, (millis, counter, node))

    @property
    def millis(self) -> int:
        return self[0]

    def __str__(self) -> str:
        return f"{self[0]:013d}.{self[1]:05d}.{self[2]}"


ZERO = Stamp(0, 0, "0")


def parse(text: object) -> Stamp | None:
    """The stamp `text` holds, or None when it is not one."""
    match = _STAMP.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    return Stamp(int(match.group(1)), int(match.group(2)), match.group(3))


def too_far_ahead(stamp: Stamp, now: int | None = None) -> bool:
    """Whether `stamp` is further ahead of this machine's clock than any
    honest clock is (MAX_AHEAD_MS)."""
    if now is None:
        import time  # this machine's own clock: how far ahead is judged here, not by the file

        now = int(time.time() * 1000)
    return stamp.millis > now + MAX_AHEAD_MS


def millis_of(timestamp: str | None) -> int:
    """Milliseconds since the epoch of an ISO timestamp (0 when unreadable)."""
    from ..support.clock import parse_ts

    moment = parse_ts(timestamp)
    return int(moment.timestamp() * 1000) if moment else 0


class Clock:
    """The clock of one database: `last` is the latest stamp seen or issued."""

    def __init__(self, node: str, last: Stamp | None = None, now: int | None = None) -> None:
        self.node = node
        # A clock an earlier thatch let a far-future stamp push ahead
        # restarts from now: the stamps it saw are refused at import.
        self.last = ZERO if last is None or too_far_ahead(last, now) else last

    def issue(self, physical: int) -> Stamp:
        """A stamp for a change made at `physical` milliseconds, later than
        every stamp seen so far."""
        millis, counter = self.last.millis, self.last[1]
        if physical > millis:
            stamp = Stamp(min(physical, _MAX_MILLIS), 0, self.node)
        elif counter < _MAX_COUNTER:
            stamp = Stamp(millis, counter + 1, self.node)
        else:  # never past the format, whatever was seen: a stamp no thatch could read would reset its clock
            stamp = Stamp(min(millis + 1, _MAX_MILLIS), 0 if millis < _MAX_MILLIS else _MAX_COUNTER, self.node)
        self.last = stamp
        return stamp

    def see(self, stamp: Stamp | None) -> None:
        """Take a received stamp into account."""
        if stamp is not None and stamp > self.last:
            self.last = Stamp(stamp[0], stamp[1], self.node)
