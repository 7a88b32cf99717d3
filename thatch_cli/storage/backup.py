"""Verified copies of the database, and putting one back.

A backup is `VACUUM INTO` a fresh private file (0600, created with O_EXCL
and O_NOFOLLOW, so nothing planted at its name is followed or reused),
taken online: other processes keep reading and writing meanwhile. It counts
as made only once verified: `PRAGMA integrity_check` answers ok and every
table holds as many rows as the database did at that moment (counted
before and after the copy; a write in between means another try). A backup
that fails verification is deleted, never left looking usable. Under a
steady stream of writes the last attempt keeps writers out (they queue, as
behind any writer) while it copies.

Restoring copies a verified backup into the live file through SQLite's
backup API, so processes that have the database open (the daemon, a
concurrent command) see the old content or the new, never a mix, and a
write-ahead log beside the file stays consistent. The file it replaces is
backed up first.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..support.files import atomic_writer, create_exclusive
from .fastread import connect_readonly
from .fingerprint import digest

ATTEMPTS = 3


class BackupFailed(Exception):
    """The copy could not be made or did not verify; nothing usable was left behind."""


def stamp(moment: float | None = None) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(moment if moment is not None else time.time()))


def sibling(db_path: Path, tag: str, when: str) -> Path:
    """A name beside `db_path` for a backup: `thatch.db.<tag>.<stamp>.bak`
    (or without a tag), numbered when taken."""
    base = f"{db_path.name}.{tag + '.' if tag else ''}{when}"
    candidate = db_path.with_name(base + ".bak")
    number = 1
    while candidate.exists() or candidate.is_symlink():
        candidate = db_path.with_name(f"{base}-{number}.bak")
        number += 1
    return candidate


def kept(directory: Path, db_name: str) -> list[tuple[str, str, Path]]:
    """The backups sibling() named in `directory` for the database file
    `db_name`, newest first: (kind, stamp, path), kind "" for `thatch
    backup`'s, else its tag (before-restore, before-schema-4 ...)."""
    import re

    pattern = re.compile(re.escape(db_name) + r"\.(?:([a-z0-9-]+)\.)?(\d{8}T\d{6}Z)(?:-(\d+))?\.bak")
    found = []
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    for name in names:
        match = pattern.fullmatch(name)
        path = directory / name
        if match and not path.is_symlink() and path.is_file():
            found.append(((match.group(2), int(match.group(3) or 0)), match.group(1) or "", path))
    found.sort(key=lambda item: item[0], reverse=True)
    return [(kind, order[0], path) for order, kind, path in found]


def prune(directory: Path, db_name: str, tag: str, keep: int, *, protect: Path) -> list[Path]:
    """Remove all but the newest `keep` backups of one kind that sibling()
    named in `directory` (with the write-ahead log a raw copy may have
    beside it); never `protect`, the one just made. Files named otherwise
    (yours) are never touched. Returns what was removed, oldest first."""
    removed = []
    for _, _, path in [b for b in kept(directory, db_name) if b[0] == tag][keep:]:
        if path == protect:
            continue
        try:
            path.unlink()
        except OSError:
            continue
        Path(f"{path}-wal").unlink(missing_ok=True)
        removed.append(path)
    return removed[::-1]


def table_counts(conn: sqlite3.Connection) -> dict[str, int | None]:
    """Rows per table (None for a virtual table whose module is not loaded)."""
    names = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    counts: dict[str, int | None] = {}
    for name in names:
        quoted = '"' + name.replace('"', '""') + '"'
        try:
            counts[name] = conn.execute(f"SELECT count(*) FROM {quoted}").fetchone()[0]
        except sqlite3.OperationalError:
            counts[name] = None
    return counts


def _counts_now(conn: sqlite3.Connection) -> dict[str, int | None]:
    conn.execute("BEGIN")
    try:
        return table_counts(conn)
    finally:
        conn.execute("COMMIT")


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _source(path: Path, timeout: float) -> sqlite3.Connection:
    from .fastread import open_readonly

    conn = open_readonly(path, timeout)
    if conn is None:
        raise BackupFailed(f"cannot open {path}")
    conn.isolation_level = None
    return conn


def verify(path: Path, expected: dict[str, int | None] | None = None) -> dict[str, int | None]:
    """Check a database file: integrity_check ok and, when given, these row
    counts. Returns its counts; raises BackupFailed."""
    try:
        conn = connect_readonly(path)
        try:
            result = [r[0] for r in conn.execute("PRAGMA integrity_check")]
            if result != ["ok"]:
                raise BackupFailed(f"{path} failed its integrity check: {'; '.join(map(str, result[:3]))}")
            counts = table_counts(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise BackupFailed(f"{path} is not a readable database: {exc}") from None
    if expected is not None and counts != expected:
        differ = sorted(k for k in set(counts) | set(expected) if counts.get(k) != expected.get(k))
        raise BackupFailed(f"{path} does not hold what was copied (row counts differ in {', '.join(differ)})")
    return counts


def copy_verified(source: Path, target: Path, *, timeout: float = 10.0) -> dict[str, int | None]:
    """VACUUM INTO `target` (which must not exist) and verify it; returns
    the row counts. The copy runs without blocking anyone; if writers keep
    changing the database under it, the last attempt holds the write lock
    for the length of the copy (readers go on, writers queue). Raises
    BackupFailed, leaving no `target` behind."""
    try:
        conn = _source(source, timeout)
    except sqlite3.Error as exc:
        raise BackupFailed(f"cannot read {source}: {exc}") from None
    try:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                with _writers_held(source, timeout, attempt == ATTEMPTS):
                    return _copy_once(conn, target)
            except _Moved:
                continue
            except sqlite3.Error as exc:
                raise BackupFailed(f"cannot copy {source}: {exc}") from None
            except OSError as exc:
                raise BackupFailed(f"cannot write {target}: {exc.strerror or exc}") from None
        raise BackupFailed(f"{source} kept changing while it was copied; try again")
    finally:
        conn.close()


def _copy_once(conn: sqlite3.Connection, target: Path) -> dict[str, int | None]:
    """Copy to a private temporary file beside `target`, verify it, and only
    then give it its name (a hard link, which never replaces anything): a
    backup killed half-way leaves no file at that name, empty or partial."""
    import tempfile

    before = _counts_now(conn)
    _drop_stale_partials(target)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=PARTIAL, dir=target.parent)
    os.close(fd)
    partial = Path(name)
    try:
        conn.execute("VACUUM INTO ?", (name,))
        _sync(partial)
        if _counts_now(conn) != before:
            raise _Moved
        counts = verify(partial, before)
        _give_name(partial, target)
        return counts
    finally:
        partial.unlink(missing_ok=True)


PARTIAL = ".partial"
STALE_PARTIAL_S = 3600.0  # a copy still being written is seconds old, never an hour


def _give_name(partial: Path, target: Path) -> None:
    try:
        os.link(partial, target)
    except FileExistsError:
        raise BackupFailed(f"{target} appeared while the backup was being made; it was left alone") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        create_exclusive(target)  # no hard links here: claim the name, then move the copy onto it
        os.replace(partial, target)


def _drop_stale_partials(target: Path) -> None:
    """Remove what a backup to the same name killed long ago left behind."""
    import time

    cutoff = time.time() - STALE_PARTIAL_S
    for leftover in target.parent.glob(f".{glob_escape(target.name)}.*{PARTIAL}"):
        try:
            if leftover.lstat().st_mtime < cutoff:
                leftover.unlink()
        except OSError:
            pass


@contextmanager
def _writers_held(source: Path, timeout: float, hold: bool) -> Iterator[None]:
    """With `hold`, keep other writers out (a write transaction that writes
    nothing) for the length of the block; a file we cannot write has no
    writers to keep out."""
    if not hold or not os.access(source, os.W_OK):
        yield
        return
    lock = sqlite3.connect(source, timeout=timeout, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            lock.execute("ROLLBACK")
    finally:
        lock.close()


class _Moved(Exception):
    """The database changed while it was being copied."""


def before_upgrade(db_path: Path, new: int) -> Path:
    """The verified backup taken before a schema upgrade changes a file. One
    is enough: when an earlier upgrade failed after making one, and the file
    has not changed since, that backup is used again instead of adding a
    copy per command."""
    tag = f"before-schema-{new}"
    earlier = sorted(db_path.parent.glob(f"{glob_escape(db_path.name)}.{tag}.*.bak"),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for candidate in earlier[:3]:
        try:
            if not candidate.is_symlink() and digest(db_path) == digest(candidate):
                return candidate
        except (OSError, sqlite3.Error):
            continue
    target = sibling(db_path, tag, stamp())
    copy_verified(db_path, target)
    return target


def glob_escape(name: str) -> str:
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in name)


def without_foreign(source: Path, folder: Path):
    """(copy, found): when `source` holds triggers, views or indexes neither
    thatch nor the original defines (foreign.py), a verified copy of it in
    `folder` without them (the caller deletes it), else None; and what was
    found. The restore copies from it, so those objects are never live in
    the database, not even for a moment."""
    from . import foreign, schema

    conn = connect_readonly(source)
    try:
        found = foreign.find(conn)
        current = schema.schema_version(conn) == schema.SCHEMA_VERSION
    finally:
        conn.close()
    if not found:
        return None, found
    target = sibling(folder / f".{source.name}", "cleaned", stamp())
    counts = copy_verified(source, target)
    try:
        conn = sqlite3.connect(target, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            foreign.strip(conn, found)
            if current:
                foreign.restore_own(conn)
            conn.execute("COMMIT")
        finally:
            conn.close()
        verify(target, counts)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return target, found


def raw_copy(source: Path, target: Path) -> None:
    """Copy a database file and its write-ahead log byte for byte (a
    database too damaged to back up is kept as it is)."""
    for src_path, dst_path in ((source, target), (Path(f"{source}-wal"), Path(f"{target}-wal"))):
        if src_path is source or src_path.is_file():
            _copy_bytes(src_path, dst_path)


def _copy_bytes(source: Path, target: Path, before_replace=None) -> None:
    import shutil

    with open(source, "rb") as src, atomic_writer(target, 0o600, binary=True) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
        if before_replace is not None:
            before_replace()


def store_versions(conn: sqlite3.Connection) -> dict[str, int]:
    try:
        return dict(conn.execute("SELECT store, version FROM thatch_cli_store_versions"))
    except sqlite3.Error:
        return {}


def restore_into(backup: Path, db_path: Path, expected: dict[str, int | None], *, timeout: float = 10.0) -> None:
    """Copy the verified `backup` over the live database through the backup
    API, check the result against `expected` (the backup's counts), and move
    every store version past what processes may have cached."""
    src = connect_readonly(backup)
    try:
        dst = sqlite3.connect(db_path, timeout=timeout, isolation_level=None)
        try:
            # The versions just before the copy: every one moves past them, so
            # no process's cached matrix of the replaced content looks current.
            before = store_versions(dst)
            src.backup(dst)
            restored = store_versions(dst)
            if restored:
                dst.execute("BEGIN IMMEDIATE")
                for store in set(restored) | set(before):
                    version = max(restored.get(store, 0), before.get(store, 0)) + 1
                    dst.execute("INSERT OR REPLACE INTO thatch_cli_store_versions (store, version) VALUES (?, ?)",
                                (store, version))
                dst.execute("COMMIT")
            result = [r[0] for r in dst.execute("PRAGMA integrity_check")]
            counts = table_counts(dst)
        finally:
            dst.close()
    finally:
        src.close()
    if result != ["ok"]:
        raise BackupFailed(f"the restored database failed its integrity check: {result[0]}")
    expected = {k: v for k, v in expected.items() if k != "thatch_cli_store_versions"}
    counts = {k: v for k, v in counts.items() if k != "thatch_cli_store_versions"}
    if counts != expected:
        raise BackupFailed("the restored database does not hold what the backup holds")


def replace_file(backup: Path, db_path: Path) -> None:
    """Put a copy of `backup` in place of a database file that cannot be
    opened at all (so nothing has it open to be confused), dropping the
    journal files that belonged to the damaged one."""
    def drop_journals() -> None:
        for suffix in ("-wal", "-shm", "-journal"):
            Path(f"{db_path}{suffix}").unlink(missing_ok=True)

    _copy_bytes(backup, db_path, drop_journals)
