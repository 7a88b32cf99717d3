"""Bulk export and import of memories as JSONL.

A memory line holds every column of `entries` under its column name (also
columns this version does not know). With vectors, `embedding` is the BLOB
base64-encoded (little-endian float32, as stored); without, the key is
absent. After the memories come their dedup verdicts and their kept
earlier versions (lines marked `"_record": "verdict"` / `"version"`), so
export then import into an empty database reproduces every row, verdicts
and history included.

Import reads lines in batches. Each line is checked as `remember` checks its
input (memory/jsonl.py); a line that fails is reported with its number and
skipped, the others are kept. Rows whose (store, slug) exists are skipped
and reported unless overwrite is on; rows without a vector the current
model can rank are embedded in one engine call per batch (the warm daemon
when available); each batch is written in one transaction
(storage/transfer.py), so a crash loses at most the batch in flight.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterable

from ..memory import jsonl
from ..storage import readable
from ..storage import transfer as table
from ..support import validate
from ..support.errors import DatabaseError, InvalidInput, ModelUnavailable
from ..support.textsafe import json_safe
from .context import Context
from .scope import detected, target

BATCH = 256
PROGRESS_LINES = 4096  # progress is reported at least this often, good lines or not
MAX_REPORTED = 1000  # errors/conflicts listed in full; counts are always exact

Progress = Callable[[int, int | None], None]


# -- export ------------------------------------------------------------------------


@dataclass
class ExportOutcome:
    stores: list[str]
    exported: int = 0
    with_vectors: bool = False
    output: str | None = None
    # Rows left out because they cannot be decoded: "memory STORE SLUG", "version ...", "verdict ..."
    unreadable: list[str] = field(default_factory=list)
    rules: int = 0  # learned rules (ops/rules_transfer.py)

    def to_json(self) -> dict:
        return {"exported": self.exported, "stores": self.stores, "with_vectors": self.with_vectors,
                "output": self.output, "unreadable": self.unreadable, "rules": self.rules}


def export_stores(ctx: Context, store: str | None, all_stores: bool) -> list[str] | None:
    """The stores an export covers (None = every store)."""
    validate.one_of(**{"--store": store, "--all-stores": all_stores})
    return None if all_stores else [target(ctx, store)]


def export(ctx: Context, stream: IO[str], stores: list[str] | None, *, with_vectors: bool) -> ExportOutcome:
    """Every memory, then every dedup verdict and every kept earlier version
    of the stores (memory/jsonl.py reads them back)."""
    db = ctx.db()
    outcome = ExportOutcome(stores=list(stores if stores is not None else db.store_names()), with_vectors=with_vectors)

    def write(record: dict, kind: str, *key: str) -> bool:
        if readable.bad(list(record.values())):
            from ..support.textsafe import one_line

            outcome.unreadable.append(" ".join([kind, *(one_line(str(record.get(k))) for k in key)]))
            return False
        encoded = {name: base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value
                   for name, value in record.items()}
        stream.write(json_safe(json.dumps(encoded, ensure_ascii=False, separators=(",", ":"))) + "\n")
        return True

    # Everything that decodes is written; a row that does not is left out and named.
    with db.snapshot(), readable.leniently(db.conn):
        for row in table.iter_rows(db, stores, with_vectors=with_vectors):
            outcome.exported += write(jsonl.exported(row), "memory", "store", "slug")
        for row in table.iter_verdicts(db, stores):
            write({jsonl.RECORD_KEY: "verdict", **row}, "verdict", "store", "slug_a", "slug_b")
        for row in table.iter_versions(db, stores, with_vectors=with_vectors):
            write({jsonl.RECORD_KEY: "version", **jsonl.exported(row)}, "version", "memory_store", "memory_slug",
                  "version")
        from ..storage import anchors

        for row in anchors.export_rows(db, stores):
            write({jsonl.RECORD_KEY: "anchor", **row}, "anchor", "store", "slug", "path")
        from .rules_transfer import records

        for record in records(db.conn, stores, with_vectors):
            outcome.rules += write(record, "rule", "kind", "id")
    return outcome


def export_to_file(ctx: Context, path: str, stores: list[str] | None, *, with_vectors: bool) -> ExportOutcome:
    """Write the export beside `path` (0600: memories may be private) and
    move it into place only once complete (files.atomic_writer: a symlink
    planted in a shared directory is never followed)."""
    from ..support.files import atomic_writer

    try:
        with atomic_writer(Path(path), 0o600) as fh:
            outcome = export(ctx, fh, stores, with_vectors=with_vectors)
    except OSError as exc:
        from ..support.errors import os_error

        raise os_error(exc, path) from None
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
    verdicts: int = 0
    versions: int = 0
    anchors: int = 0
    rules: int = 0

    def error(self, line: int, message: str) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_REPORTED:
            self.errors.append({"line": line, "message": message})

    def conflict(self, line: int, store: str, slug: str) -> None:
        self.skipped += 1
        if len(self.conflicts) < MAX_REPORTED:
            self.conflicts.append({"line": line, "store": store, "slug": slug})

    def to_json(self) -> dict:
        keys = ("created", "replaced", "skipped", "embedded", "kept_vectors", "without_vector", "lines", "model",
                "error_count", "errors", "conflicts", "notices", "verdicts", "versions", "anchors", "rules")
        return {key: getattr(self, key) for key in keys}


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

    def parse(self, number: int, raw: bytes | str) -> jsonl.Line:
        record = jsonl.load(jsonl.decode(raw, number == 1))
        kind = record.pop(jsonl.RECORD_KEY, "memory")
        if kind == "memory":
            return jsonl.Line(number, kind, jsonl.memory(record, self.store_of(record, "store"), self.now,
                                                         self.columns))
        if kind == "verdict":
            return jsonl.Line(number, kind, jsonl.verdict(record, self.store_of(record, "store")))
        if kind == "anchor":
            return jsonl.Line(number, kind, jsonl.anchor(record, self.store_of(record, "store")))
        if kind == "version":
            return jsonl.Line(number, kind, jsonl.version(record, lambda name: self.store_of(record, name),
                                                          self.now))
        if kind == "rule":
            from .rules_transfer import parsed

            return jsonl.Line(number, kind, parsed(record, self.store_of(record, "store")))
        raise jsonl.Invalid(f"unknown {jsonl.RECORD_KEY} {str(kind)[:40]!r}")

    def store_of(self, record: dict, name: str) -> str:
        """--store when given, else the line's own store, else the detected one."""
        if self.store:
            return self.store
        value = record.get(name)
        if value is None:
            return self.default_store()
        if not isinstance(value, str):
            raise jsonl.Invalid(f"{name!r} must be a string")
        try:
            return validate.store(value)
        except InvalidInput as exc:
            raise jsonl.Invalid(exc.message) from None

    def default_store(self) -> str:
        if self._default_store is None:
            self._default_store = detected(self.ctx)
        return self._default_store

    # -- vectors ---------------------------------------------------------------

    def model(self) -> tuple[str, str, int] | None:
        """(name, space, dim) of the current model; None when it cannot load."""
        if self._model is None and not self._model_failed:
            from ..model.embeddings import model_space

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

    def usable(self, row: jsonl.Line) -> bool:
        """Whether the line's vector can be kept. A vector the current model
        would rank (its space) must have the model's width: anything else in
        that space is refused rather than stored to distort rankings."""
        from ..model.embeddings import model_space

        blob, current = row.values["embedding"], self.model()
        if blob is None:
            return False
        if current is None:
            return True  # cannot judge: keep what came in, reindex fixes it later
        name, _, dim = current
        if model_space(row.values["model"]) != model_space(name):
            return False
        if len(blob) != 4 * dim:
            raise jsonl.Invalid(f"'embedding' has {len(blob) // 4} dimensions; {row.values['model']} has {dim}")
        return True

    def embed(self, rows: list[jsonl.Line]) -> list[jsonl.Line]:
        """Give every row a vector it can keep (embedding those without);
        returns the rows still good to write."""
        todo: list = []
        kept: list = []
        for row in rows:
            try:
                (kept if self.usable(row) else todo).append(row)
            except jsonl.Invalid as exc:
                self.outcome.error(row.number, str(exc))
        self.outcome.kept_vectors += len(kept)
        if not todo:
            return kept
        if self._model_failed:
            self._strip(todo)
            return kept + todo
        try:
            embedded = self.engine.embed_passages([row.values["content"] for row in todo])
        except ModelUnavailable as exc:
            self._fail_model(exc)
            self._strip(todo)
            return kept + todo
        for row, blob in zip(todo, embedded.blobs):
            row.values["embedding"], row.values["model"] = blob, embedded.model
        self.outcome.embedded += len(todo)
        return kept + todo

    def _strip(self, rows: list[jsonl.Line]) -> None:
        for row in rows:
            row.values["embedding"] = row.values["model"] = None
            self.outcome.without_vector += 1

    # -- writing ---------------------------------------------------------------

    def _credentials(self, rows: list[jsonl.Line]) -> None:
        """Say which imported lines look like they hold a credential (by line
        number: a label can be the secret itself)."""
        from ..support import secrets

        extra = self.ctx.setting("sync.secret_rules") or None
        for row in rows:
            warning = secrets.warning(row.values["label"], row.values["content"], extra)
            if warning and len(self.outcome.notices) < 20:
                self.outcome.notices.append(f"line {row.number}: {warning}")

    def write_batch(self, lines: list[jsonl.Line]) -> None:
        memories = [line for line in lines if line.kind == "memory"]
        # Conflicts first, so skipped rows are never embedded.
        seen: set[tuple[str, str]] = set()
        wanted: list[jsonl.Line] = []
        for row in memories:
            if not self.overwrite and (row.key in seen or self.db.exists(*row.key)):
                self.outcome.conflict(row.number, *row.key)
                continue
            seen.add(row.key)
            wanted.append(row)
        wanted = self.embed(wanted)
        others = [(line.number, line.kind, line.values) for line in lines if line.kind in ("verdict", "version")]
        anchored = [(line.number, line.values) for line in lines if line.kind == "anchor"]
        rules = [line.values for line in lines if line.kind == "rule"]
        try:
            created, replaced = table.write_batch(self.db, [(row.number, row.values) for row in wanted],
                                                  overwrite=self.overwrite, conflict=self.outcome.conflict,
                                                  failed=self.outcome.error)
            verdicts, versions = table.write_records(self.db, others, overwrite=self.overwrite,
                                                     failed=self.outcome.error)
            from ..storage import anchors

            self.outcome.anchors += anchors.import_rows(self.db, anchored, overwrite=self.overwrite,
                                                        failed=self.outcome.error)
            if rules:
                from .rules_transfer import write

                with self.db.transaction() as conn:
                    self.outcome.rules += write(conn, rules)
        except sqlite3.Error as exc:
            first = (wanted or lines)[0].number if (wanted or lines) else "?"
            raise DatabaseError(f"import failed at line {first}: {exc}") from exc
        self.outcome.created += created
        self.outcome.replaced += replaced
        self._credentials(wanted)
        self.outcome.verdicts += verdicts
        self.outcome.versions += versions


def import_lines(
    ctx: Context,
    lines: Iterable[bytes | str],
    *,
    overwrite: bool = False,
    store: str | None = None,
    progress: Progress | None = None,
    total: int | None = None,
    batch_size: int = BATCH,
) -> ImportOutcome:
    """Import JSONL lines (bytes are decoded strictly, line by line). A line
    that cannot be imported is reported with its number and skipped; the
    others are written in batches."""
    importer = _Importer(ctx, overwrite=overwrite, store=store)
    outcome = importer.outcome
    batch: list[jsonl.Line] = []
    number = 0
    if progress:
        progress(0, total)
    for number, raw in enumerate(lines, start=1):
        outcome.lines = number
        if progress and number % PROGRESS_LINES == 0:
            progress(number, total)
        if isinstance(raw, jsonl.TooLong):
            outcome.error(number, raw.reason())
            if not raw.ended:
                break
            continue
        if not raw.strip():
            continue
        try:
            batch.append(importer.parse(number, raw))
        except jsonl.Invalid as exc:
            outcome.error(number, str(exc))
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
    """Lines in a regular file (for a progress bar); None for anything else
    (a pipe or device may never end)."""
    import os
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return None
