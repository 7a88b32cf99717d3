"""`thatch backup` and `thatch restore`: verified copies of the whole
database, taken online, and putting one back (storage/backup.py does the
copying and checking)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ..storage import backup as copies
from ..storage import opening, schema
from ..support.errors import Conflict, DatabaseError, InvalidInput, NotFound
from .context import Context


def _stamp(ctx: Context) -> str:
    return copies.stamp(ctx.clock().timestamp())


def _existing_db(ctx: Context) -> Path:
    path = ctx.db_path
    if not path.is_file():
        raise NotFound(f"there is no database at {path} yet")
    return path


class BackupOutcome:
    __slots__ = ("database", "path", "counts", "removed")

    def __init__(self, database: Path, path: Path, counts: dict[str, int | None],
                 removed: list[Path] | None = None) -> None:
        self.database, self.path, self.counts = database, path, counts
        self.removed = removed or []  # older backups past backup.keep

    def to_json(self) -> dict[str, Any]:
        return {"backup": str(self.path), "database": str(self.database), "bytes": self.path.stat().st_size,
                "memories": self.counts.get("entries"), "tables": self.counts, "verified": True,
                "removed": [str(p) for p in self.removed]}


def _prune(ctx: Context, made: Path, db: Path, tag: str) -> list[Path]:
    """Keep the newest backup.keep backups of this kind beside `made`
    (thatch's names only; a file you named is never removed)."""
    return copies.prune(made.parent, db.name, tag, ctx.setting("backup.keep"), protect=made)


def _target(ctx: Context, db: Path, path: str | None) -> Path:
    if path is None:
        return copies.sibling(db, "", _stamp(ctx))
    chosen = Path(path).expanduser()
    if chosen.is_dir():
        return copies.sibling(chosen / db.name, "", _stamp(ctx))
    if chosen.exists() or chosen.is_symlink():
        raise Conflict(f"{chosen} already exists; a backup never overwrites a file (choose a new name)",
                       path=str(chosen))
    if not chosen.parent.is_dir():
        raise InvalidInput(f"cannot write {chosen}: directory {chosen.parent} does not exist")
    return chosen


def backup(ctx: Context, path: str | None = None) -> BackupOutcome:
    """Copy the database to `path` (default: beside it, named with the
    time) with VACUUM INTO while other processes keep using it, and verify
    the copy (integrity check, row counts). Nothing is migrated."""
    db = _existing_db(ctx)
    ctx.setting("backup.keep")  # a broken setting fails before the copy, not after
    target = _target(ctx, db, path)
    try:
        counts = copies.copy_verified(db, target)
    except copies.BackupFailed as exc:
        raise DatabaseError(f"backup failed: {exc}") from None
    return BackupOutcome(db, target, counts, _prune(ctx, target, db, ""))


class RestoreOutcome:
    __slots__ = ("database", "source", "previous", "previous_verified", "counts", "removed", "unknown_tables",
                 "pruned")

    def __init__(self, database: Path, source: Path, previous: Path | None, previous_verified: bool,
                 counts: dict[str, int | None], removed: list[str], unknown_tables: list[str],
                 pruned: list[Path] | None = None) -> None:
        self.database, self.source, self.previous = database, source, previous
        self.previous_verified, self.counts = previous_verified, counts
        self.removed, self.unknown_tables = removed, unknown_tables
        self.pruned = pruned or []  # older before-restore copies past backup.keep

    def to_json(self) -> dict[str, Any]:
        return {"database": str(self.database), "restored_from": str(self.source),
                "previous_backup": str(self.previous) if self.previous else None,
                "previous_verified": self.previous_verified, "memories": self.counts.get("entries"),
                "tables": self.counts, "removed": self.removed, "unknown_tables": self.unknown_tables,
                "pruned": [str(p) for p in self.pruned]}


def _check_backup(path: Path) -> dict[str, int | None]:
    if not path.is_file():
        raise NotFound(f"no backup file at {path}")
    try:
        counts = copies.verify(path)
        version = opening.file_version(path)
    except (copies.BackupFailed, sqlite3.Error) as exc:
        raise DatabaseError(f"not restoring from {path}: {exc}") from None
    if "entries" not in counts:
        raise DatabaseError(f"not restoring from {path}: it is not a thatch database (no entries table)")
    if version > schema.SCHEMA_VERSION:
        raise DatabaseError(f"not restoring from {path}: it was written by a newer thatch (schema {version})")
    return counts


def restore(ctx: Context, path: str) -> RestoreOutcome:
    """Replace the database's content with a verified backup. The current
    file is backed up first (verified when it can be read at all, else copied
    byte for byte), so a restore can be undone by restoring that. Triggers,
    views and indexes neither thatch nor the original defines are left out
    (storage/foreign.py) and named."""
    source = Path(path).expanduser()
    ctx.setting("backup.keep")  # a broken setting fails before anything changes
    counts = _check_backup(source)
    db = ctx.db_path
    if db.exists() and db.resolve() == source.resolve():
        raise InvalidInput(f"{source} is the database itself")
    if not db.parent.is_dir():
        raise DatabaseError(f"cannot restore to {db}: directory {db.parent} does not exist")
    try:
        cleaned, found = copies.without_foreign(source, db.parent)
    except (copies.BackupFailed, sqlite3.Error, OSError) as exc:
        raise DatabaseError(f"not restoring from {source}: cannot leave out what it should not hold ({exc})") from None
    try:
        outcome = _restore(ctx, db, cleaned or source, counts)
    finally:
        if cleaned is not None:
            cleaned.unlink(missing_ok=True)
    outcome.source = source
    outcome.removed = found.names()
    outcome.unknown_tables = found.tables
    return outcome


def _restore(ctx: Context, db: Path, source: Path, counts: dict[str, int | None]) -> RestoreOutcome:
    previous, verified, readable = None, False, True
    if db.exists():
        previous = copies.sibling(db, "before-restore", _stamp(ctx))
        try:
            copies.copy_verified(db, previous)
            verified = True
        except copies.BackupFailed:
            readable = False
            try:
                copies.raw_copy(db, previous)
            except OSError as exc:
                raise DatabaseError(f"not restoring: cannot keep a copy of {db} ({exc.strerror or exc})") from None
    try:
        if readable and db.exists():
            copies.restore_into(source, db, counts)
        else:
            copies.replace_file(source, db)
            copies.verify(db, counts)
    except (copies.BackupFailed, sqlite3.Error, OSError) as exc:
        kept = f"; the previous database was kept as {previous}" if previous else ""
        raise DatabaseError(f"restore failed: {exc}{kept}") from None
    pruned = _prune(ctx, previous, db, "before-restore") if previous is not None else []
    return RestoreOutcome(db, source, previous, verified, counts, [], [], pruned)

