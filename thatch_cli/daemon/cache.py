"""The daemon's store cache: each store's vector matrix of the model's
embedding space, kept per (database file, store, space, dim) and stamped
with the store version the triggers maintain. A request whose store version differs reloads it inside
one read transaction, so the matrix and the version agree; a save a client
reports is patched in instead. The database stays the only source of truth.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from .protocol import ErrorReply

MAX_CACHED = 32


class Entry:
    __slots__ = ("version", "vectors", "unranked")

    def __init__(self, version: int, vectors: Any, unranked: int) -> None:
        # vectors: dense.StoreVectors
        self.version, self.vectors, self.unranked = version, vectors, unranked


class StoreCache:
    def __init__(self, max_entries: int = MAX_CACHED) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple, Entry] = OrderedDict()
        self._dbs: dict[str, tuple[tuple[int, int], Any, threading.Lock]] = {}
        self._guard = threading.Lock()
        self.loads = 0
        self.patches = 0

    def _database(self, path: str):
        """(real path, MemoryDB, lock) for a database file, reopened when the
        file was replaced (its cached entries go with it). Only an existing
        thatch database of this schema is opened: the daemon never creates
        or migrates a file a client names."""
        from ..storage.memories import MemoryDB
        from ..support.errors import ThatchError

        real = os.path.realpath(path)
        try:
            st = os.stat(real)
        except OSError as exc:
            raise ErrorReply("database", f"cannot open database {path}: {exc.strerror or exc}") from None
        ident = (st.st_dev, st.st_ino)
        with self._guard:
            known = self._dbs.get(real)
            if known is not None and known[0] == ident:
                return real, known[1], known[2]
            if known is not None:
                # The file was replaced: forget it (its connection closes when
                # the last request using it lets go) and whatever we cached.
                for key in [k for k in self._entries if k[0] == real]:
                    del self._entries[key]
            try:
                db = MemoryDB.open_existing(Path(real))  # used from several threads, under its lock
            except ThatchError as exc:
                raise ErrorReply("database", exc.message) from None
            lock = threading.Lock()
            self._dbs[real] = (ident, db, lock)
            return real, db, lock

    def entry(self, path: str, store: str, space: str | None, dim: int) -> Entry:
        from ..model.embeddings import model_space
        from ..ranking.dense import load_store_vectors
        from ..storage.vectors import inventory

        real, db, lock = self._database(path)
        key = (real, store, space, dim)
        with lock:
            version = db.store_version(store)
            with self._guard:
                found = self._entries.get(key)
                if found is not None and found.version == version:
                    self._entries.move_to_end(key)
                    return found
            with db.snapshot():
                version = db.store_version(store)
                vectors = load_store_vectors(db, store, space, dim)
                unranked = sum(count for model, length, count in inventory(db, [store])
                               if length != 4 * dim or model_space(model) != space)
            entry = Entry(version, vectors, unranked)
            with self._guard:
                self._entries[key] = entry
                self._entries.move_to_end(key)
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
                self.loads += 1
            trim_heap()
            return entry

    def apply_saved(self, path: str, store: str, before: int, after: int, slug: str,
                    saved: tuple[str | None, bool, str | None, bytes | None, dict[str, Any]], replaced: bool) -> int:
        """Patch cached matrices of `store` for one memory just saved, when
        the cache holds exactly the state before that save (store version
        `before`); the save moved the version to `after`. Anything else
        (other writes interleaved, an unknown state) is left for the next
        request to reload from the database. Returns how many entries were
        patched."""
        from ..ranking.dense import comparable, finite_rows

        real, db, lock = self._database(path)
        branch, archived, model, blob, values = saved
        patched = 0
        with lock:
            with self._guard:
                found = [(k, e) for k, e in self._entries.items()
                         if k[0] == real and k[1] == store and e.version == before]
            for key, entry in found:
                _, _, space, dim = key
                if blob is not None and len(blob) == 4 * dim and not finite_rows([blob], dim).all():
                    blob = None  # never ranked: reloading leaves it out the same way
                row = ((branch, archived, blob, values) if blob is not None and comparable(model, blob, space, dim)
                       else None)
                vectors, was_ranked = with_row(entry.vectors, slug, row, dim)
                unranked = entry.unranked - (1 if replaced and not was_ranked else 0) + (0 if row is not None else 1)
                with self._guard:
                    self._entries[key] = Entry(after, vectors, max(unranked, 0))
                    self.patches += 1
                patched += 1
        return patched

    def size(self) -> tuple[int, int]:
        """(cached stores, cached vectors)."""
        with self._guard:
            return len(self._entries), sum(len(e.vectors.slugs) for e in self._entries.values())

    def close(self) -> None:
        with self._guard:
            for _, db, _ in self._dbs.values():
                db.close()
            self._dbs.clear()
            self._entries.clear()


def with_row(vectors, slug: str, row: tuple[str | None, bool, bytes, dict[str, Any]] | None, dim: int):
    """(StoreVectors with `slug`'s row replaced by `row` (or removed when
    None), whether `slug` had a row). Rows stay in slug order, as
    load_store_vectors (ORDER BY slug) would put them, so a patched matrix
    ranks exactly like a reloaded one."""
    from bisect import bisect_left

    import numpy as np

    from ..memory.fields import FILTERED
    from ..ranking.dense import StoreVectors, filter_column, from_blob, normalise

    slugs = vectors.slugs
    i = bisect_left(slugs, slug)
    present = i < len(slugs) and slugs[i] == slug
    end = i + 1 if present else i
    branch_ids = dict(vectors.branch_ids)
    if row is None:
        middle_slugs: list[str] = []
        middle = (np.zeros((0, dim), np.float32), np.zeros(0, np.int32), np.zeros(0, bool))
        values = {f.name: filter_column(f, []) for f in FILTERED}
    else:
        branch, archived, blob, given = row
        code = branch_ids.setdefault(branch, len(branch_ids) + 1) if branch else 0
        middle_slugs = [slug]
        middle = (normalise(from_blob(blob).reshape(1, dim)), np.array([code], np.int32), np.array([bool(archived)]))
        values = {f.name: filter_column(f, [given.get(f.name)]) for f in FILTERED}
    patched = StoreVectors(
        store=vectors.store,
        slugs=slugs[:i] + middle_slugs + slugs[end:],
        branch_codes=np.concatenate([vectors.branch_codes[:i], middle[1], vectors.branch_codes[end:]]),
        branch_ids=branch_ids,
        archived=np.concatenate([vectors.archived[:i], middle[2], vectors.archived[end:]]),
        matrix=np.concatenate([vectors.matrix[:i], middle[0], vectors.matrix[end:]]),
        values={name: np.concatenate([column[:i], values[name], column[end:]])
                for name, column in vectors.values.items()},
    )
    return patched, present


def trim_heap() -> None:
    """Give the allocator's free memory back to the OS. Loading a store
    goes through one Python bytes object per row; without this the daemon
    keeps ~150 MB of freed heap per 100k vectors loaded (glibc only)."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
