"""One memory in the memories ref: a JSON file at `m/<2 hex of
sha1(slug)>/<slug>.json`, beside a small format file.

A live memory's file is a `thatch export` line without what is not synced
(store, vectors and model, recall counts: records.SYNCED_FIELDS says what
is), and its `anchors` when it has any (the code it describes), plus `author` (who wrote this version) and `hlc` (its hybrid logical
clock stamp). A forgotten memory leaves a tombstone: `deleted: true` with
its slug, label, author and stamp, and `renamed_to` (the new label) when
the memory was renamed rather than forgotten; absence is never a deletion.

Files from the remote are read as an import reads a line (memory/jsonl.py:
every check `remember` applies) and more: the file's name must be its
label's slug in the right shard, and a file over MAX_RECORD_BYTES is refused
unread.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from ..memory import jsonl
from ..memory.records import SYNCED_FIELDS
from ..support import validate
from ..support.errors import InvalidInput
from ..support.slugs import slugify
from . import hlc

FORMAT_PATH = "format.json"
# Tombstones of content: what `thatch sync purge` took off the remote, as
# the sha1 of each purged text, so no clone publishes that text again.
PURGED_PATH = "purged.json"
MAX_PURGED = 10_000
FORMAT = {"format": "thatch-memories", "version": 1,
          "about": "Memories shared by thatch sync: m/<2 hex of sha1(slug)>/<slug>.json, one per memory."}
FORMAT_VERSION = 1
MAX_RECORD_BYTES = 256 * 1024  # 64 KiB of content, even with every character escaped
MAX_AUTHOR_CHARS = 200
FAR_AHEAD = f"its 'hlc' stamp is more than {hlc.MAX_AHEAD_MS // 3_600_000} hours ahead of this machine's clock"


def path_of(slug: str) -> str:
    return f"m/{hashlib.sha1(slug.encode('utf-8')).hexdigest()[:2]}/{slug}.json"


def slug_of(path: str) -> str | None:
    """The slug a path names when it is where that slug's file belongs."""
    parts = path.split("/")
    if len(parts) != 3 or parts[0] != "m" or not parts[2].endswith(".json"):
        return None
    slug = parts[2][: -len(".json")]
    return slug if slug and path_of(slug) == path else None


def text_key(content: str) -> str:
    return hashlib.sha1(content.encode("utf-8")).hexdigest()


def parse_purged(data: bytes) -> set[str]:
    """The text keys a purged.json lists (anything else in it is ignored)."""
    try:
        keys = json.loads(data.decode("utf-8")).get("purged", [])
    except (ValueError, UnicodeDecodeError, AttributeError):
        return set()
    if not isinstance(keys, list):
        return set()
    return {k for k in keys[:MAX_PURGED] if isinstance(k, str) and len(k) == 40
            and all(c in "0123456789abcdef" for c in k)}


def encode_purged(keys: set[str]) -> bytes:
    return (json.dumps({"purged": sorted(keys)[:MAX_PURGED]}, indent=0) + "\n").encode()


def digest_of(fields: Mapping[str, Any] | None) -> str:
    """What tells two versions of a memory apart: a hash of its synced
    fields and, when it has any, its anchors ("deleted" for a tombstone).
    A memory without anchors hashes as it did before anchors existed."""
    if fields is None:
        return "deleted"
    values = [fields.get(name) for name in SYNCED_FIELDS] + ([fields["anchors"]] if fields.get("anchors") else [])
    text = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


_UNREAD = object()


class Record:
    """A memory's state as synced: its fields (None for a tombstone), who
    wrote it and when (stamp). A record known from an earlier read (the
    cache of reading.py) holds only its digest until its fields are asked
    for, when `load` reads them."""

    __slots__ = ("_digest", "_fields", "_load", "_text_key", "author", "label", "renamed_to", "slug", "stamp")

    def __init__(self, slug: str, label: str, fields: dict[str, Any] | None, author: str | None,
                 stamp: hlc.Stamp, *, digest: str | None = None, load: Callable[[], Record] | None = None,
                 renamed_to: str | None = None, text_key: str | None = None) -> None:
        self.slug, self.label, self.author, self.stamp = slug, label, author, stamp
        self.renamed_to, self._text_key = renamed_to, text_key
        self._fields: Any = _UNREAD if load is not None else fields
        self._digest, self._load = digest, load

    @property
    def fields(self) -> dict[str, Any] | None:
        if self._fields is _UNREAD and self._load is not None:
            self._fields = self._load().fields
        return self._fields

    @property
    def digest(self) -> str:
        if self._digest is None:
            self._digest = digest_of(self.fields)
        return self._digest

    @property
    def unread(self) -> bool:
        """Known from the cache only: its fields are read when first asked for."""
        return self._fields is _UNREAD

    def provide(self, fields: dict[str, Any] | None) -> None:
        """Its fields, read together with others' (reading.read_fields)."""
        self._fields = fields

    @property
    def text_key(self) -> str | None:
        """What a purge remembers of this version (None for a tombstone)."""
        if self._text_key is None and self.fields is not None:
            self._text_key = text_key(self.fields["content"])
        return self._text_key

    @property
    def deleted(self) -> bool:
        if self._digest is None and self._fields is not _UNREAD:
            return self._fields is None  # without computing the digest (a big pull's merge asks for each)
        return self.digest == "deleted"

    def same(self, other: Record | None) -> bool:
        """Whether both hold the same memory (or both are tombstones),
        whoever wrote them and whenever."""
        return other is not None and self.digest == other.digest

    def identical(self, other: Record | None) -> bool:
        """Whether both are the same file: the same memory, author and stamp."""
        return other is not None and self.same(other) and self.author == other.author and self.stamp == other.stamp

    def to_json(self) -> dict[str, Any]:
        if self.fields is None:
            data: dict[str, Any] = {"slug": self.slug, "label": self.label, "deleted": True}
            if self.renamed_to is not None:
                data["renamed_to"] = self.renamed_to
        else:
            data = {"slug": self.slug, **self.fields}
        data["author"] = self.author
        data["hlc"] = str(self.stamp)
        return data

    def encode(self) -> bytes:
        """The file's bytes: sorted keys, no padding, so the same memory is
        always the same blob (and an unchanged shard the same tree)."""
        return (json.dumps(self.to_json(), ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n").encode()

    def __repr__(self) -> str:
        return f"Record({self.slug!r}, {'deleted' if self.deleted else 'live'}, {self.stamp})"


def from_row(row: Mapping[str, Any], author: str | None, stamp: hlc.Stamp) -> Record:
    """The record of an `entries` row (storage/sync.rows)."""
    return Record(row["slug"], row["label"], normal(row), author, stamp)


def normal(values: Mapping[str, Any]) -> dict[str, Any]:
    """The synced fields of a row or a file, in one form (no branch is None,
    archived is 0 or 1), so equal memories have equal digests."""
    fields = {name: values.get(name) for name in SYNCED_FIELDS}
    fields["branch"] = fields["branch"] or None
    fields["archived"] = int(bool(fields["archived"]))
    if values.get("anchors"):
        fields["anchors"] = sorted(values["anchors"], key=lambda a: (a["path"], a["start_line"], a["end_line"]))
    return fields


# An anchor's keys in a memory's file (storage/anchors.py's columns); line
# hashes longer than this are left out (the other clone then tells a change
# by blob id alone), so anchors never push a file past MAX_RECORD_BYTES.
ANCHOR_KEYS = ("path", "start_line", "end_line", "commit_id", "blob", "fingerprint", "line_hashes", "anchored_at")
MAX_SYNCED_ANCHORS = 50
MAX_SYNCED_HASH_CHARS = 4000


def synced_anchor(values: Mapping[str, Any]) -> dict[str, Any]:
    """One anchor as a memory's file carries it."""
    anchor = {key: values.get(key) for key in ANCHOR_KEYS}
    if anchor["line_hashes"] and len(anchor["line_hashes"]) > MAX_SYNCED_HASH_CHARS:
        anchor["line_hashes"] = None
    return anchor


def _anchors(raw: Any, slug: str) -> list[dict[str, Any]]:
    """The anchors of a file from the remote, each checked as an import checks one."""
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_SYNCED_ANCHORS:
        raise jsonl.Invalid(f"'anchors' must be a list of at most {MAX_SYNCED_ANCHORS} anchors")
    found = []
    for item in raw:
        if not isinstance(item, dict):
            raise jsonl.Invalid("each of 'anchors' must be an object")
        checked = jsonl.anchor({**item, "slug": slug}, "-")
        found.append(synced_anchor(checked))
    return found


def tombstone(slug: str, label: str, author: str | None, stamp: hlc.Stamp, renamed_to: str | None = None) -> Record:
    return Record(slug, label, None, author, stamp, renamed_to=renamed_to)


def moved(record: Record, label: str) -> Record:
    """`record`'s memory under `label` (a rename made elsewhere that it
    follows): the same text under the new heading, the same author and stamp."""
    from ..support.slugs import body_of, passage_text

    assert record.fields is not None
    fields = {**record.fields, "label": label,
              "content": passage_text(label, body_of(record.label, record.fields["content"]))}
    return Record(slugify(label), label, fields, record.author, record.stamp)


def values_of(record: Record, store: str) -> dict[str, Any]:
    """The entries row a live record becomes in `store` (no vector yet; its anchors left out)."""
    assert record.fields is not None
    fields = {k: v for k, v in record.fields.items() if k != "anchors"}
    return {"slug": record.slug, "store": store, **fields, "embedding": None, "model": None}


def check_author(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_AUTHOR_CHARS:
        raise jsonl.Invalid(f"'author' must be a text of at most {MAX_AUTHOR_CHARS} characters")
    if validate.control_characters(value) or jsonl.has_surrogate(value):
        raise jsonl.Invalid("'author' contains a control character")
    return value


_READ = frozenset(("slug", *SYNCED_FIELDS))  # a file's keys that a memory's row takes


@functools.lru_cache(maxsize=4)
def _millis(now: str) -> int:
    """`now` in milliseconds: the same for every file of one read."""
    return hlc.millis_of(now)


def parse(path: str, data: bytes, now: str) -> Record:
    """The record in a file of the ref; jsonl.Invalid (with the reason) when
    it cannot be taken: oversized, not where its label's slug belongs, or
    failing any of import's checks."""
    slug = slug_of(path)
    if slug is None:
        raise jsonl.Invalid("not a memory's file (m/<2 hex of sha1(slug)>/<slug>.json)")
    if len(data) > MAX_RECORD_BYTES:
        raise jsonl.Invalid(f"{len(data)} bytes; the limit is {MAX_RECORD_BYTES}")
    raw = jsonl.load(jsonl.decode(data, False))
    stamp = hlc.parse(raw.get("hlc"))
    if stamp is None:
        raise jsonl.Invalid("missing or malformed 'hlc' stamp")
    if hlc.too_far_ahead(stamp, _millis(now)):
        raise jsonl.Invalid(FAR_AHEAD)
    author = check_author(raw.get("author"))
    if raw.get("deleted") is True:
        label = jsonl.text_value(raw, "label", required=True)
        try:
            label = validate.label(label)
        except InvalidInput as exc:
            raise jsonl.Invalid(exc.message) from None
        renamed_to = raw.get("renamed_to")
        if renamed_to is not None:
            try:
                renamed_to = validate.label(jsonl.text_value(raw, "renamed_to", required=True))
            except InvalidInput as exc:
                raise jsonl.Invalid(exc.message) from None
        record = tombstone(slugify(label), label, author, stamp, renamed_to)
    else:
        values = jsonl.memory({k: v for k, v in raw.items() if k in _READ}, "-", now, {})
        values["anchors"] = _anchors(raw.get("anchors"), values["slug"])
        record = Record(values["slug"], values["label"], normal(values), author, stamp)
    given = raw.get("slug")
    if record.slug != slug or (given is not None and given != slug):
        raise jsonl.Invalid(f"the file is named for slug {slug!r}, but its label {record.label!r} gives"
                            f" {record.slug!r}")
    return record
