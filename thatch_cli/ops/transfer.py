"""Bulk export and import of memories as JSONL, one memory per line.

A line holds every column of `entries` under its column name (also columns
this version does not know). With vectors, `embedding` is the BLOB
base64-encoded (little-endian float32, as stored); without, the key is
absent. Export then import into an empty database reproduces every row.

Import reads lines in batches: malformed lines are reported with their line
number and skipped; rows whose (store, slug) exists are skipped and
reported unless overwrite is on; rows without a vector the current model
can rank are embedded in one engine call per batch (the warm daemon when
available); each batch is written in one transaction (storage/transfer.py).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import sqlite3
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterable

from .. import validate
from ..context import Context
from ..errors import DatabaseError, InvalidInput, ModelUnavailable
from ..storage import transfer as table
from .scope import target

BATCH = 256
MAX_REPORTED = 1000  # errors/conflicts listed in full; counts are always exact

Progress = Callable[[int, int | None], None]


# -- export ------------------------------------------------------------------------


@dataclass
class ExportOutcome:
    stores: list[str]
    exported: int = 0
    with_vectors: bool = False
    output: str | None = None

    def to_json(self) -> dict:
        return {"exported": self.exported, "stores": self.stores, "with_vectors": self.with_vectors,
                "output": self.output}


def export_stores(ctx: Context, store: str | None, all_stores: bool) -> list[str] | None:
    """The stores an export covers (None = every store)."""
    validate.one_of(**{"--store": store, "--all-stores": all_stores})
    return None if all_stores else [target(ctx, store)]


def export(ctx: Context, stream: IO[str], stores: list[str] | None, *, with_vectors: bool) -> ExportOutcome:
    db = ctx.db()
    outcome = ExportOutcome(stores=list(stores if stores is not None else db.store_names()), with_vectors=with_vectors)
    for row in table.iter_rows(db, stores, with_vectors=with_vectors):
        record = {name: base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value
                  for name, value in row.items()}
        stream.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        outcome.exported += 1
    return outcome


def export_to_file(ctx: Context, path: str, stores: list[str] | None, *, with_vectors: bool) -> ExportOutcome:
    """Write the export next to `path` (0600: memories may be private) and
    move it into place only once complete."""
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            outcome = export(ctx, fh, stores, with_vectors=with_vectors)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from None
    outcome.output = path
    return outcome


# -- import --------------------------------------------------------------------------


@dataclass
class ImportOutcome:
    created: int = 0
    replaced: int = 0
    skipped: int = 0
    embedded: int = 0
    kept_vectors: int = 0
    without_vector: int = 0
    lines: int = 0
    model: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    error_count: int = 0
    notices: list[str] = field(default_factory=list)

    def error(self, line: int, message: str) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_REPORTED:
            self.errors.append({"line": line, "message": message})

    def conflict(self, line: int, store: str, slug: str) -> None:
        self.skipped += 1
        if len(self.conflicts) < MAX_REPORTED:
            self.conflicts.append({"line": line, "store": store, "slug": slug})

    def to_json(self) -> dict:
        return {
            "created": self.created,
            "replaced": self.replaced,
            "skipped": self.skipped,
            "embedded": self.embedded,
            "kept_vectors": self.kept_vectors,
            "without_vector": self.without_vector,
            "lines": self.lines,
            "model": self.model,
            "error_count": self.error_count,
            "errors": self.errors,
            "conflicts": self.conflicts,
            "notices": self.notices,
        }


class _Row:
    __slots__ = ("line", "values")

    def __init__(self, line: int, values: dict[str, Any]) -> None:
        self.line, self.values = line, values

    @property
    def key(self) -> tuple[str, str]:
        return (self.values["store"], self.values["slug"])


class _Invalid(Exception):
    pass


def _text(record: dict, name: str, *, required: bool = False) -> str | None:
    value = record.get(name)
    if value is None:
        if required:
            raise _Invalid(f"missing {name!r}")
        return None
    if not isinstance(value, str):
        raise _Invalid(f"{name!r} must be a string")
    if required and not value.strip():
        raise _Invalid(f"{name!r} is empty")
    return value


def _integer(record: dict, name: str, default: int | None) -> int | None:
    value = record.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if not isinstance(value, int):
        raise _Invalid(f"{name!r} must be an integer")
    return value


class _Importer:
    def __init__(self, ctx: Context, *, overwrite: bool, store: str | None) -> None:
        self.ctx = ctx
        self.db = ctx.db()
        self.overwrite = overwrite
        self.store = validate.store(store) if store is not None else None
        self._default_store: str | None = None
        self.columns = dict(table.entry_columns(self.db))
        self.outcome = ImportOutcome()
        self.engine = ctx.engine()
        self._model: tuple[str, str, int] | None = None  # (name, space, dim)
        self._model_failed = False
        self.now = ctx.now()

    # -- parsing -------------------------------------------------------------

    def parse(self, number: int, line: str) -> _Row:
        from ..slugs import slugify

        try:
            record = json.loads(line)
        except ValueError as exc:
            raise _Invalid(f"not valid JSON: {exc}") from None
        if not isinstance(record, dict):
            raise _Invalid("not a JSON object")
        label = _text(record, "label", required=True)
        content = _text(record, "content", required=True)
        slug = _text(record, "slug") or slugify(label)
        if self.store:
            store = self.store
        elif record.get("store") is not None:
            store = validate.store(_text(record, "store") or "")
        else:
            store = self.default_store()
        values: dict[str, Any] = {
            "slug": slug,
            "store": store,
            "label": label,
            "content": content,
            "model": _text(record, "model"),
            "branch": _text(record, "branch"),
            "confidence": _integer(record, "confidence", None),
            "archived": int(bool(_integer(record, "archived", 0))),
            "created_at": _text(record, "created_at") or self.now,
            "updated_at": _text(record, "updated_at") or _text(record, "created_at") or self.now,
            "recall_count": _integer(record, "recall_count", 0) or 0,
            "last_recalled_at": _text(record, "last_recalled_at"),
            "embedding": None,
        }
        encoded = record.get("embedding")
        if encoded is not None:
            if not isinstance(encoded, str):
                raise _Invalid("'embedding' must be a base64 string")
            try:
                blob = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                raise _Invalid("'embedding' is not valid base64") from None
            if len(blob) % 4:
                raise _Invalid("'embedding' is not a float32 vector")
            values["embedding"] = blob
        for name, value in record.items():  # columns this version does not know
            if name in values or name not in self.columns:
                continue
            if isinstance(value, str) and "BLOB" in self.columns[name]:
                try:
                    value = base64.b64decode(value, validate=True)
                except (binascii.Error, ValueError):
                    raise _Invalid(f"{name!r} is not valid base64") from None
            elif not isinstance(value, (str, int, float, type(None))):
                raise _Invalid(f"{name!r} must be a scalar")
            values[name] = value
        return _Row(number, values)

    def default_store(self) -> str:
        if self._default_store is None:
            self._default_store = self.ctx.default_store()
        return self._default_store

    # -- vectors ---------------------------------------------------------------

    def model(self) -> tuple[str, str, int] | None:
        """(name, space, dim) of the current model; None when it cannot load."""
        if self._model is None and not self._model_failed:
            from ..embeddings import model_space

            try:
                name, dim = self.engine.model_info()
                self._model = (name, model_space(name) or "", dim)
                self.outcome.model = name
            except ModelUnavailable as exc:
                self._fail_model(exc)
        return self._model

    def _fail_model(self, exc: ModelUnavailable) -> None:
        self._model_failed = True
        self.outcome.notices.append(
            f"embedding model unavailable ({exc.message}); rows without a usable vector were imported"
            " without one: run 'thatch reindex' once the model loads"
        )

    def usable(self, row: _Row) -> bool:
        from ..embeddings import model_space

        blob, current = row.values["embedding"], self.model()
        if blob is None:
            return False
        if current is None:
            return True  # cannot judge: keep what came in, reindex fixes it later
        _, space, dim = current
        return len(blob) == 4 * dim and model_space(row.values["model"]) == space

    def embed(self, rows: list[_Row]) -> None:
        todo = [row for row in rows if not self.usable(row)]
        self.outcome.kept_vectors += len(rows) - len(todo)
        if not todo:
            return
        if self._model_failed:
            self._strip(todo)
            return
        try:
            embedded = self.engine.embed_passages([row.values["content"] for row in todo])
        except ModelUnavailable as exc:
            self._fail_model(exc)
            self._strip(todo)
            return
        for row, blob in zip(todo, embedded.blobs):
            row.values["embedding"], row.values["model"] = blob, embedded.model
        self.outcome.embedded += len(todo)

    def _strip(self, rows: list[_Row]) -> None:
        for row in rows:
            row.values["embedding"] = row.values["model"] = None
            self.outcome.without_vector += 1

    # -- writing ---------------------------------------------------------------

    def write_batch(self, rows: list[_Row]) -> None:
        # Conflicts first, so skipped rows are never embedded.
        seen: set[tuple[str, str]] = set()
        wanted: list[_Row] = []
        for row in rows:
            if not self.overwrite and (row.key in seen or self.db.exists(*row.key)):
                self.outcome.conflict(row.line, *row.key)
                continue
            seen.add(row.key)
            wanted.append(row)
        self.embed(wanted)
        try:
            created, replaced = table.write_batch(self.db, [(row.line, row.values) for row in wanted],
                                                  overwrite=self.overwrite, conflict=self.outcome.conflict,
                                                  failed=self.outcome.error)
        except sqlite3.Error as exc:
            raise DatabaseError(f"import failed at line {wanted[0].line if wanted else '?'}: {exc}") from exc
        self.outcome.created += created
        self.outcome.replaced += replaced


def import_lines(
    ctx: Context,
    lines: Iterable[str],
    *,
    overwrite: bool = False,
    store: str | None = None,
    progress: Progress | None = None,
    total: int | None = None,
    batch_size: int = BATCH,
) -> ImportOutcome:
    importer = _Importer(ctx, overwrite=overwrite, store=store)
    outcome = importer.outcome
    batch: list[_Row] = []
    number = 0
    if progress:
        progress(0, total)
    for number, line in enumerate(lines, start=1):
        outcome.lines = number
        if not line.strip():
            continue
        try:
            batch.append(importer.parse(number, line))
        except _Invalid as exc:
            outcome.error(number, str(exc))
            continue
        except InvalidInput as exc:
            outcome.error(number, exc.message)
            continue
        if len(batch) >= batch_size:
            importer.write_batch(batch)
            batch = []
            if progress:
                progress(number, total)
    if batch:
        importer.write_batch(batch)
    if progress:
        progress(number, total if total is not None else number)
    return outcome


def count_lines(path: str) -> int | None:
    try:
        with open(path, "rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return None
