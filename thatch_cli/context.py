"""Everything a command needs from the outside world, passed in explicitly:
environment, working directory, clock, database path, embedder, and whether
vectors may come from the warm daemon. Tests build their own (never using
the daemon); the CLI builds one from the real process."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Callable, Mapping

from . import paths
from .clock import Clock, format_ts, system_clock

if TYPE_CHECKING:
    from .daemon.engine import DaemonEngine, LocalEngine
    from .embeddings import Embedder
    from .store import MemoryDB


def _default_embedder(env: Mapping[str, str]) -> "Embedder":
    from .embeddings import embedder_from_env

    return embedder_from_env(env)


@dataclass
class Context:
    env: Mapping[str, str]
    cwd: Path
    clock: Clock = system_clock
    embedder_factory: Callable[[Mapping[str, str]], "Embedder"] = _default_embedder
    # Let vectors come from the warm daemon (starting it when needed). Only
    # real process runs turn this on; an injected embedder_factory or
    # THATCH_DAEMON=0 keeps everything in-process regardless.
    use_daemon: bool = False
    stderr: IO[str] | None = field(default=None, repr=False)
    _db: "MemoryDB | None" = field(default=None, repr=False)
    _embedder: "Embedder | None" = field(default=None, repr=False)
    _engine: "DaemonEngine | LocalEngine | None" = field(default=None, repr=False)

    @classmethod
    def from_process(cls) -> "Context":
        return cls(env=dict(os.environ), cwd=Path.cwd(), use_daemon=True)

    @property
    def db_path(self) -> Path:
        return paths.db_path(self.env)

    def db(self) -> "MemoryDB":
        if self._db is None:
            from .store import MemoryDB

            self._db = MemoryDB.open(self.db_path)
        return self._db

    def embedder(self) -> "Embedder":
        if self._embedder is None:
            self._embedder = self.embedder_factory(self.env)
        return self._embedder

    def daemon_enabled(self) -> bool:
        if not self.use_daemon or self.embedder_factory is not _default_embedder:
            return False
        from .daemon.runtime import disabled

        return not disabled(self.env)

    def engine(self) -> "DaemonEngine | LocalEngine":
        """Embedding and search for this command: the daemon when enabled,
        else (or when it cannot serve) this process."""
        if self._engine is None:
            from .daemon.engine import make_engine

            self._engine = make_engine(self)
        return self._engine

    def notice(self, text: str) -> None:
        """One line of side information on stderr (stdout stays parseable)."""
        stream = self.stderr or sys.stderr
        stream.write(f"thatch: {text}\n")
        stream.flush()

    def now(self) -> str:
        return format_ts(self.clock())

    def default_store(self) -> str:
        """THATCH_STORE, else the repository's identity (cached per git dir)."""
        override = (self.env.get("THATCH_STORE") or "").strip()
        if override:
            return override
        from .repo import resolve_store

        return resolve_store(self.cwd, paths.cache_dir(self.env) / "repos.json")

    def current_branch(self) -> str | None:
        from . import gitfs

        location = gitfs.locate(self.cwd)
        return gitfs.head_branch(location) if location else None

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
        if self._db is not None:
            self._db.close()
            self._db = None
