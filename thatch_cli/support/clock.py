"""Timestamps in the original thatch's format: ISO-8601 UTC with milliseconds and Z."""

from __future__ import annotations

from datetime import UTC, datetime  # free: sqlite3 imports it anyway

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Callable

    Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


def format_ts(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
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
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
