"""One line of a JSONL export, read into checked values (ops/transfer.py
drives the import).

An export holds four kinds of line: a memory (every column of `entries`),
a dedup verdict (`"_record": "verdict"`), a kept earlier version of a
memory (`"_record": "version"`) and an anchor, the code a memory describes
(`"_record": "anchor"`). Every value an import writes passes the
checks `remember` applies (support/validate.py, named by the field in memory/fields.py) or
the check of its field's kind, so one crafted line cannot put into the
store what no command could:
a malformed line raises Invalid with the reason, and the import reports it
with its line number and goes on.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from typing import Any, Callable

from ..support import validate
from ..support.clock import parse_ts
from ..support.errors import InvalidInput
from ..support.slugs import body_of, slugify
from . import fields, values

RECORD_KEY = "_record"
MAX_LINE_CHARS = 500  # a one-line field's value (a model's name)
# The longest line an import reads: a memory holds at most 64 KiB of text
# (up to six times that once escaped as JSON) and a vector of a few
# kilobytes. A longer line is skipped without being held in memory.
MAX_LINE_BYTES = 1024 * 1024
MAX_STATUS_CHARS = 50
INT64 = (-(2**63), 2**63 - 1)


class Invalid(Exception):
    """A line that cannot be imported, and why (one line)."""


class Line:
    __slots__ = ("number", "kind", "values")

    def __init__(self, number: int, kind: str, values: dict[str, Any]) -> None:
        self.number, self.kind, self.values = number, kind, values

    @property
    def key(self) -> tuple[str, str]:
        return (self.values["store"], self.values["slug"])


# Past this much of one line, the input is taken to have no end (/dev/zero).
MAX_SKIPPED_BYTES = 64 * MAX_LINE_BYTES


class TooLong:
    """Stands for a line longer than MAX_LINE_BYTES, skipped unread; `ended`
    False when it went on past MAX_SKIPPED_BYTES and reading stopped."""

    __slots__ = ("ended", "size")

    def __init__(self, size: int, ended: bool) -> None:
        self.size, self.ended = size, ended

    def reason(self) -> str:
        if not self.ended:
            return (f"the line goes on past {MAX_SKIPPED_BYTES // 1024 // 1024} MiB without an end; the rest of"
                    " the input was not read")
        return f"the line is {self.size:,} bytes; a line of an export is at most {MAX_LINE_BYTES // 1024 // 1024} MiB"


def lines(stream: Any, limit: int = MAX_LINE_BYTES):
    """The lines of `stream` (bytes or text), each at most `limit` long; a
    longer one is read past in pieces and comes out as TooLong, so memory
    stays bounded, and an input with no end (one endless line) stops."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line[-1:] in (b"\n", "\n"):
            yield line
            continue
        size = len(line)
        while line and line[-1:] not in (b"\n", "\n"):
            if size > MAX_SKIPPED_BYTES:
                yield TooLong(size, False)
                return
            line = stream.readline(limit)
            size += len(line)
        yield TooLong(size, True)


def decode(raw: bytes | str, first: bool) -> str:
    """A line as text: strict UTF-8 (a byte-order mark on the first line is
    dropped); a line with bytes that are not UTF-8 is Invalid."""
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Invalid(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})") from None
    else:
        text = raw
        if has_surrogate(text):
            raise Invalid("not valid UTF-8")
    return text[1:] if first and text.startswith("\ufeff") else text


def has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _checked(check: Callable[..., Any], *args: Any) -> Any:
    """A support/validate.py check, its InvalidInput turned into Invalid."""
    try:
        return check(*args)
    except InvalidInput as exc:
        raise Invalid(exc.message) from None


def text_value(record: dict, name: str, *, required: bool = False, limit: int | None = None,
          one_line: bool = False) -> str | None:
    value = record.get(name)
    if value is None:
        if required:
            raise Invalid(f"missing {name!r}")
        return None
    if not isinstance(value, str):
        raise Invalid(f"{name!r} must be a string")
    if required and not value.strip():
        raise Invalid(f"{name!r} is empty")
    if has_surrogate(value):
        raise Invalid(f"{name!r} is not valid Unicode (a lone surrogate)")
    if limit is not None and len(value) > limit:
        raise Invalid(f"{name!r} is {len(value)} characters; the limit is {limit}")
    if one_line and validate.control_characters(value):
        raise Invalid(f"{name!r} contains a control character")
    return value


def _integer(record: dict, name: str, default: int | None, low: int = INT64[0], high: int = INT64[1]) -> int | None:
    value = record.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{name!r} must be an integer")
    if not low <= value <= high:
        raise Invalid(f"{name!r} is out of range ({value if abs(value) < 10**12 else 'too large'})")
    return value


def _timestamp(record: dict, name: str, default: str | None) -> str | None:
    value = text_value(record, name, limit=64, one_line=True)
    if value is None:
        return default
    if parse_ts(value) is None:
        raise Invalid(f"{name!r} is not a timestamp: {value[:40]!r}")
    return value


def _flag(record: dict, name: str) -> int:
    value = record.get(name, 0)
    if value in (0, 1) or isinstance(value, bool):
        return int(value)
    raise Invalid(f"{name!r} must be 0, 1, true or false")


def vector(encoded: Any, name: str = "embedding") -> bytes | None:
    """A base64 little-endian float32 vector: non-empty, whole floats, all finite."""
    if encoded is None:
        return None
    if not isinstance(encoded, str):
        raise Invalid(f"{name!r} must be a base64 string")
    try:
        blob = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise Invalid(f"{name!r} is not valid base64") from None
    if not blob or len(blob) % 4:
        raise Invalid(f"{name!r} is not a float32 vector ({len(blob)} bytes)")
    import numpy as np

    if not np.isfinite(np.frombuffer(blob, dtype="<f4")).all():
        raise Invalid(f"{name!r} holds NaN or infinite values")
    return blob


def _scalar(name: str, value: Any, declared: str) -> Any:
    """A value for a column this version does not know."""
    if isinstance(value, str) and "BLOB" in declared:
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise Invalid(f"{name!r} is not valid base64") from None
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise Invalid(f"{name!r} is out of range")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Invalid(f"{name!r} is not a finite number")
        return value
    if isinstance(value, str):
        if has_surrogate(value):
            raise Invalid(f"{name!r} is not valid Unicode (a lone surrogate)")
        return value
    raise Invalid(f"{name!r} must be a scalar")


def load(text: str) -> dict[str, Any]:
    try:
        record = json.loads(text)
    except RecursionError:
        raise Invalid("not valid JSON: nested too deeply") from None
    except ValueError as exc:
        raise Invalid(f"not valid JSON: {exc}") from None
    if not isinstance(record, dict):
        raise Invalid("not a JSON object")
    return record


def _value(record: dict, field: fields.Field) -> Any:
    """A field's value from a line, checked by its kind (memory/fields.py), then by
    its support/validate.py check when it has one and a value is given."""
    name, kind = field.name, field.kind
    if kind == "flag":
        value: Any = _flag(record, name)
    elif kind in ("int", "count"):
        value = _integer(record, name, field.default if isinstance(field.default, int) else None,
                         0 if kind == "count" else INT64[0])
        value = value or 0 if kind == "count" else value
    elif kind == "time":
        value = _timestamp(record, name, None)
    elif kind == "blob":
        value = vector(record.get(name), name)
    elif kind == "list":
        return _items(record, field)
    else:  # line, name: optional text
        value = text_value(record, name, limit=MAX_LINE_CHARS if kind == "line" else None, one_line=kind == "line")
    if field.check and value not in (None, ""):
        value = _checked(getattr(validate, field.check), value)
    return value


def _items(record: dict, field: fields.Field) -> str | None:
    """A list field's stored text from a line: its items as an array (an
    export's shape) or as stored text (a synced file's), each checked as
    when it is saved."""
    raw = record.get(field.name)
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = list(fields.items(raw))
    if not isinstance(raw, list) or any(isinstance(item, str) and has_surrogate(item) for item in raw):
        raise Invalid(f"{field.name!r} must be a list of text")
    return fields.joined(_checked(values.listed, field, raw))


def exported(row: dict[str, Any]) -> dict[str, Any]:
    """A row as its export line shows it: a list field's items as an array
    (what `_items` reads back)."""
    for f in fields.LISTS:
        if f.column in row:
            row = {**row, f.column: list(fields.items(row[f.column]))}
    return row


def memory(record: dict, store: str, now: str, columns: dict[str, str]) -> dict[str, Any]:
    """The entries row a memory line describes, checked like `remember`:
    the key and text first (the slug follows the label), then every other
    field by its kind; a missing creation time is `now`, a missing update
    time the creation time."""
    label = _checked(validate.label, text_value(record, "label", required=True))
    content = text_value(record, "content", required=True) or ""  # required: never None
    _checked(validate.content, body_of(label, content))
    slug = slugify(label)
    given = text_value(record, "slug", limit=validate.MAX_LABEL_CHARS * 4)
    if given is not None and given != slug:
        raise Invalid(f"slug {given!r} does not match its label {label!r} (which gives {slug!r})")
    values: dict[str, Any] = {"slug": slug, "store": store, "label": label, "content": content}
    for field in fields.ENTRIES:
        if field.column not in values:
            values[field.column] = _value(record, field)
    values["created_at"] = values["created_at"] or now
    values["updated_at"] = values["updated_at"] or values["created_at"]
    for name, value in record.items():  # columns this version does not know
        if name not in values and name in columns:
            values[name] = _scalar(name, value, columns[name])
    return values


def verdict(record: dict, store: str) -> dict[str, Any]:
    a = text_value(record, "slug_a", required=True, limit=validate.MAX_LABEL_CHARS * 4, one_line=True) or ""
    b = text_value(record, "slug_b", required=True, limit=validate.MAX_LABEL_CHARS * 4, one_line=True) or ""
    return {"store": store, "slug_a": min(a, b), "slug_b": max(a, b),
            "status": _verdict_status(record),
            "checked_at": _timestamp(record, "checked_at", None) or _missing("checked_at")}


def _verdict_status(record: dict) -> str:
    """One a command can record: the original thatch's four, or `dedup keep`'s."""
    status = text_value(record, "status", required=True, limit=MAX_STATUS_CHARS, one_line=True)
    if status != validate.DISTINCT:
        status = _checked(validate.status, status)
    return status


def version(record: dict, store: Callable[[str], str], now: str) -> dict[str, Any]:
    """A kept earlier version: its memory's key and number, and the memory
    as it was (`store` maps a field name to the store to use for it)."""
    snapshot = memory(record, store("store"), now, {})
    key_slug = text_value(record, "memory_slug", required=True, limit=validate.MAX_LABEL_CHARS * 4, one_line=True)
    return {**snapshot, "memory_store": store("memory_store"), "memory_slug": key_slug,
            "version": _integer(record, "version", None, 1) or _missing("version"),
            "event": text_value(record, "event", required=True, limit=20, one_line=True),
            "recorded_at": _timestamp(record, "recorded_at", None) or _missing("recorded_at")}


def _missing(name: str) -> Any:
    raise Invalid(f"missing {name!r}")


MAX_ANCHOR_LINES = 250_000  # line hashes in one anchor (a 2 MB file of short lines)


def _hex(record: dict, name: str, *, required: bool = False, length: int | None = 40,
         limit: int | None = None) -> str | None:
    value = text_value(record, name, required=required, limit=limit or length)
    if value is None:
        return None
    if (length is not None and len(value) != length) or any(c not in "0123456789abcdef" for c in value):
        raise Invalid(f"{name!r} must be {'a ' + str(length) + '-digit' if length else 'a'} lowercase hex string")
    return value


def anchor(record: dict, store: str) -> dict[str, Any]:
    """An anchor row (storage/anchors.py): a path from a repository's top
    level that cannot leave it, a line range, and git and line hashes."""
    slug = text_value(record, "slug", required=True, limit=validate.MAX_LABEL_CHARS * 4, one_line=True)
    path = text_value(record, "path", required=True, limit=4096, one_line=True)
    assert path is not None
    parts = path.split("/")
    if path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts):
        raise Invalid(f"'path' must be a file's path from the repository's top level: {path[:60]!r}")
    start = _integer(record, "start_line", 0, 0, 10**9) or 0
    end = _integer(record, "end_line", 0, 0, 10**9) or 0
    if (start == 0) != (end == 0) or end < start:
        raise Invalid("'start_line' and 'end_line' must be a range (both 0 for the whole file)")
    hashes = _hex(record, "line_hashes", length=None, limit=MAX_ANCHOR_LINES * 8)
    if hashes is not None and len(hashes) % 8:
        raise Invalid("'line_hashes' must be 8 hex digits per line")
    return {"store": store, "slug": slug, "path": path, "start_line": start, "end_line": end,
            "commit_id": _hex(record, "commit_id"), "blob": _hex(record, "blob", required=True),
            "fingerprint": _hex(record, "fingerprint"), "line_hashes": hashes,
            "anchored_at": _timestamp(record, "anchored_at", None) or "1970-01-01T00:00:00.000Z"}
