"""Timestamps in the original thatch's format: ISO-8601 UTC with milliseconds and Z."""

from __future__ import annotations

from datetime import datetime, timezone

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Callable

    Clock = Callable[[], datetime]  # what a Context asks for the current moment


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


def format_ts(moment: datetime) -> str:
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_ts(text: str | None) -> datetime | None:
    """Read timestamps written by either tool: with or without milliseconds,
    'Z' or an explicit offset, 'T' or a space; naive values are UTC."""
    if not text:
        return None
    value = text.strip().replace(" ", "T", 1)
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)
