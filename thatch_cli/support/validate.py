"""The one set of input checks. Every front door (the CLI, the MCP server,
the hooks) reaches these through ops/, so a label, store or branch is
judged the same way wherever it comes from. Each check returns the value to
use (stripped, lower-cased where that is the rule) or raises InvalidInput
with a one-line message naming the option."""

from __future__ import annotations

import math

from .errors import InvalidInput

MAX_CONTENT_BYTES = 64 * 1024
MAX_LABEL_CHARS = 200
MAX_STORE_CHARS = 200
MAX_BRANCH_CHARS = 250
MAX_TAG_CHARS = 50
MAX_LIMIT = 1000
MAX_PAIR_LIMIT = 10_000
MODES = ("hybrid", "semantic", "lexical")
# Verdicts `dedup mark` records: the original thatch's vocabulary.
VERDICTS = ("duplicate", "supplement", "contradiction", "unrelated")
DISTINCT = "distinct"  # the verdict `dedup keep` records


def control_characters(text: str) -> list[str]:
    """The C0, DEL and C1 control characters in `text` (a terminal obeys them)."""
    if text.isprintable():  # none of them is printable; checked in C, as most text is
        return []
    return [ch for ch in text if ord(ch) < 32 or 127 <= ord(ch) < 160]


def _encodable(text: str, what: str) -> str:
    """`text`, unless it holds a lone surrogate (undecodable bytes smuggled
    in as text: SQLite and every terminal would refuse them)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{what} is not valid UTF-8 text") from None
    return text


def _one_line(text: str, what: str, limit: int) -> str:
    """`text`, unless it is blank, longer than `limit`, not valid text or holds a control character."""
    _encodable(text, what)
    if not text.strip():
        raise InvalidInput(f"{what} is empty")
    if len(text) > limit:
        raise InvalidInput(f"{what} is {len(text)} characters; the limit is {limit}")
    bad = control_characters(text)
    if bad:
        raise InvalidInput(f"{what} {text[:40]!r} contains a control character ({bad[0]!r}); it must be one line")
    return text


def _name(value: str | None, what: str, limit: int) -> str:
    return _one_line((value or "").strip(), what, limit)


def store(name: str | None) -> str:
    return _name(name, "store name", MAX_STORE_CHARS)


def branch(name: str | None, option: str = "--branch") -> str:
    return _name(name, f"branch name ({option})", MAX_BRANCH_CHARS)


def tag(value: str | None) -> str:
    """A tag as it is stored and matched: NFC, lower-case, its words joined
    by '-' ("Needs Review" is needs-review); InvalidInput for an empty or
    too long one, or one holding ',' or a character a terminal would not
    show (named escaped)."""
    from unicodedata import normalize

    from .textsafe import visible

    text = "-".join(normalize("NFC", _encodable(value or "", "tag")).lower().split())
    if not text:
        raise InvalidInput("tag is empty")
    if "," in text or visible(text, keep="") != text:
        raise InvalidInput(f"tag '{visible(text, keep='')}' holds ',' or an invisible or control character")
    if len(text) > MAX_TAG_CHARS:
        raise InvalidInput(f"tag '{visible(text[:20], keep='')}...' is {len(text)} characters; the limit is"
                           f" {MAX_TAG_CHARS}")
    return text


def label(value: str | None) -> str:
    """A label as given (its spaces are part of it), on one line."""
    return _one_line(value or "", "label", MAX_LABEL_CHARS)


def content(value: str | None) -> str:
    if not value or not value.strip():
        raise InvalidInput("content is empty")
    size = len(_encodable(value, "content").encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidInput(f"content is {size} bytes; the limit is {MAX_CONTENT_BYTES} bytes (64 KiB)")
    return value


def confidence(value: int | None) -> int | None:
    if value is not None and not 1 <= value <= 10:
        raise InvalidInput(f"confidence must be between 1 and 10, got {value}")
    return value


def limit(value: int, maximum: int = MAX_LIMIT, option: str = "--limit") -> int:
    if not 1 <= value <= maximum:
        raise InvalidInput(f"{option} must be between 1 and {maximum}, got {value}")
    return value


def query(text: str | None) -> str:
    if not text or not text.strip():
        raise InvalidInput("query is empty")
    return _encodable(text, "query")


def mode(value: str) -> str:
    chosen = (value or "").strip().lower()
    if chosen not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}, got {value!r}")
    return chosen


def floor(value: float, option: str = "--floor") -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value <= 1):
        raise InvalidInput(f"{option} must be between 0 and 1, got {value}")
    return float(value)


def threshold(value: float) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 < value <= 1):
        raise InvalidInput(f"--threshold must be above 0 and at most 1, got {value}")
    return float(value)


def status(value: str) -> str:
    chosen = (value or "").strip().lower()
    if chosen not in VERDICTS:
        raise InvalidInput(f"unknown status {value!r}; use one of {', '.join(VERDICTS)}")
    return chosen


MAX_DAYS = 36_500  # a century: a longer span has no date to compare with


def days(value: int, option: str = "--stale-days") -> int:
    if value < 0:
        raise InvalidInput(f"{option} must be 0 or more, got {value}")
    if value > MAX_DAYS:
        raise InvalidInput(f"{option} must be at most {MAX_DAYS} (a century), got {_short_number(value)}")
    return value


def _short_number(value: int) -> str:
    text = str(value)
    return text if len(text) <= 12 else f"{text[:4]}… ({len(text)} digits)"


def budget(value: int | None) -> int | None:
    if value is not None and value < 1:
        raise InvalidInput(f"budget must be a positive number of characters, got {value}")
    return value


def one_of(**given: object) -> None:
    """At most one of the named options may be given (truthy)."""
    named = [name for name, value in given.items() if value]
    if len(named) > 1:
        raise InvalidInput(f"use either {named[0]} or {named[1]}, not both")


def version(value: int | None) -> int | None:
    if value is not None and value < 1:
        raise InvalidInput(f"--version must be 1 or more, got {value}")
    return value
