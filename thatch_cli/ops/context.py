"""Everything an operation needs from the outside world, passed in
explicitly: environment, working directory, clock, standard streams,
database path, embedder, and whether vectors may come from the warm daemon.

Tests and library users build their own (`Context.open`); the command line
builds one from the real process (`Context.from_process`). Operations read
the environment and the directory only through it, and the time through
its clock, with these exceptions, which read the wall clock themselves: a
sync's commit times (sync/applying.py, sync/purge.py) and its hybrid
logical clock (sync/hlc.py), and the age past which an agent's extraction
queue is dropped (ops/extraction.py). A hook's directory, when its payload
names none, is the process's own (location/scope.py).
"""

from __future__ import annotations

import os
import sys

from ..support import paths
from ..support.clock import format_ts, system_clock

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import IO, Any

    from ..location.scope import Place
    from ..model.embeddings import Embedder
    from ..storage.memories import MemoryDB
    from ..support.clock import Clock


def _default_embedder(env: Mapping[str, str]) -> Embedder:
    from ..model.embeddings import embedder_from_env

    return embedder_from_env(env)


class Context:
    """A plain class, not a dataclass: light commands build one before
    anything else, and `dataclasses` costs them inspect, ast and dis."""

    __slots__ = (
        "_cwd",
        "_db",
        "_embedder",
        "_engine",
        "_place",
        "_shown",
        "clock",
        "embedder_factory",
        "env",
        "indicator",
        "stderr",
        "stdin",
        "stdout",
        "degrade_under_load",
        "use_daemon",
        "wait_for_model",
    )

    def __init__(self, env: Mapping[str, str], cwd: str | os.PathLike, clock: Clock = system_clock,
                 embedder_factory: Callable[[Mapping[str, str]], Embedder] = _default_embedder,
                 use_daemon: bool = False, indicator: Callable[[str], Any] | None = None,
                 wait_for_model: bool = True, degrade_under_load: bool = True, stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                 stderr: IO[str] | None = None, _db: MemoryDB | None = None) -> None:
        self.env = env
        self._cwd = cwd  # a str until someone needs a Path (pathlib costs a light command ~6 ms)
        self.clock = clock
        self.embedder_factory = embedder_factory
        # Let vectors come from the warm daemon (starting it when needed). Only
        # real process runs turn this on; an injected embedder_factory or the
        # daemon.enabled setting (THATCH_DAEMON=0) keeps everything in-process regardless.
        self.use_daemon = use_daemon
        # How a wait for the model or the daemon shows itself: message -> a
        # context manager with aside(text) for notices. The command line sets it
        # for a person at a terminal (cli/waiting.py); None shows nothing.
        self.indicator = indicator
        # False: use the model only if the daemon already has it loaded, else
        # degrade at once (engine.DaemonEngine); agents' recalls and the agent hook flush-tools.
        self.wait_for_model = wait_for_model
        # When the daemon is there but not keeping up, degrade (keywords, a save
        # without a vector) rather than load the model in this process too;
        # reindex, which exists to embed, turns it off.
        self.degrade_under_load = degrade_under_load
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self._db = _db  # a database opened by the caller (a hook opens an existing one only)
        self._embedder: Embedder | None = None
        self._engine: Any = None
        self._place: Place | None = None
        self._shown: Any = None  # the indicator of the wait in progress

    def __repr__(self) -> str:
        return f"Context(cwd={self.cwd_text!r}, db={self.db_file!r})"

    @property
    def cwd(self) -> Path:
        """The working directory the command runs for."""
        if not isinstance(self._cwd, str):
            return self._cwd  # type: ignore[return-value]
        from pathlib import Path

        self._cwd = Path(self._cwd)
        return self._cwd

    @cwd.setter
    def cwd(self, value: str | os.PathLike) -> None:
        self._cwd = value
        self._place = None

    @property
    def cwd_text(self) -> str:
        """The working directory as text, without building a Path."""
        return os.fspath(self._cwd)

    @classmethod
    def from_process(cls) -> Context:
        return cls(env=dict(os.environ), cwd=os.getcwd(), use_daemon=True)

    @classmethod
    def open(cls, db: str | os.PathLike | None = None, *, cwd: str | os.PathLike | None = None,
             env: Mapping[str, str] | None = None, embedder: Embedder | None = None,
             use_daemon: bool = False) -> Context:
        """A context for library use: `db` (default: THATCH_DB or the usual
        file), `cwd` (default: the current directory) decides the detected
        store and branch, `embedder` replaces the configured model."""
        merged = dict(os.environ if env is None else env)
        if db is not None:
            merged["THATCH_DB"] = os.path.expanduser(os.fspath(db))
        context = cls(env=merged, cwd=os.fspath(cwd) if cwd is not None else os.getcwd(), use_daemon=use_daemon)
        if embedder is not None:
            context.embedder_factory = lambda _env: embedder
        return context

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def db_path(self) -> Path:
        return paths.db_path(self.env)

    @property
    def db_file(self) -> str:
        """The database's path as text (what the light commands open)."""
        return paths.db_file(self.env)

    def db(self) -> MemoryDB:
        if self._db is None:
            from ..storage.memories import MemoryDB

            # Only the default location is created: a THATCH_DB naming a
            # directory that does not exist is a mistake to report.
            self._db = MemoryDB.open(self.db_file, create_parent=paths.db_is_default(self.env),
                                     history_keep=lambda: self.setting("history.keep"))
            for notice in self._db.notices:
                self.notice(notice)
            self._db.on_unreadable = self.notice
            self._adopt_model_paths()
        return self._db

    def _adopt_model_paths(self) -> None:
        """Give rows an older thatch labelled with a model folder's path the
        model's identity (embeddings.legacy_renames), once, so a moved or
        recreated folder still ranks them. Best effort: a busy or read-only
        database is left for a later command."""
        import sqlite3

        from ..storage import vectors

        db = self._db
        if db is None or db.read_only:
            return
        try:
            from ..support.settings import value

            def configured() -> str:  # leniently: a broken settings file is the command's to report
                return value(self.env, "model", strict=False)

            legacy = vectors.legacy_model_paths(db, configured)
            if legacy is not None:
                from ..model.embeddings import legacy_renames

                # Never make the command wait behind another writer for this.
                model = configured()
                with db.waiting_at_most(0):
                    vectors.rename_models(db, legacy_renames(legacy, model, self.env), legacy, model)
        except sqlite3.OperationalError:
            pass

    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self.embedder_factory(self.env)
        return self._embedder

    def setting(self, key: str):
        """The value of setting `key` (support/settings.py); a broken settings file or
        value is this command's error (SettingsError). A key of the file no
        setting has is warned about (once)."""
        from ..support.settings import value, warnings

        found = value(self.env, key)
        for line in warnings(self.env):
            self.notice(line)
        return found

    def daemon_enabled(self) -> bool:
        if not self.use_daemon or self.embedder_factory is not _default_embedder:
            return False
        # Read strictly here: the daemon's own readers fall back to defaults,
        # and a broken model setting must not silently become the default model.
        self.setting("model")
        return bool(self.setting("daemon.enabled"))

    def engine(self):
        """Embedding and dense search for this command (ops/engine.py): the
        daemon when enabled, else (or when it cannot serve) this process."""
        if self._engine is None:
            from .engine import make_engine

            self._engine = make_engine(self, self.daemon_enabled())
        return self._engine

    def place(self) -> Place:
        """The store and branch of the working directory (location/scope.py)."""
        if self._place is None:
            from ..location.scope import here

            self._place = here(self.env, self.cwd_text)
        return self._place

    def default_store(self) -> str:
        return self.place().store

    def current_branch(self) -> str | None:
        return self.place().branch

    def read_stdin(self, limit: int | None = None) -> str:
        """Standard input as text; bytes that are not UTF-8 are a usage
        error, and so is more than `limit` bytes (reading stops there: an
        endless input is never held in memory)."""
        from ..support.errors import InvalidInput

        stream = self.stdin or sys.stdin
        if stream is None or stream.closed:
            raise InvalidInput("no standard input to read")
        try:
            if limit is None:
                text = stream.read()
            else:
                raw = getattr(stream, "buffer", None)
                data = raw.read(limit + 1) if raw is not None else stream.read(limit + 1)
                if len(data) > limit:
                    raise InvalidInput(f"standard input holds more than {limit:,} bytes, the limit; nothing was"
                                       " saved (reading stopped there)")
                text = data.decode("utf-8") if isinstance(data, bytes) else data
            text.encode("utf-8")
        except UnicodeError as exc:
            where = f" (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})" if isinstance(
                exc, UnicodeDecodeError) else ""
            raise InvalidInput(f"standard input is not valid UTF-8{where}") from None
        return text

    def notice(self, text: str) -> None:
        """One line of side information on stderr (stdout stays parseable)."""
        if self._shown is not None:
            self._shown.aside(f"thatch: {text}\n")
            return
        stream = self.stderr or sys.stderr
        stream.write(f"thatch: {text}\n")
        stream.flush()

    def waiting(self, message: str) -> _Waiting:
        """A context manager around a wait (for the model, the daemon) that
        a person should see: `message` says what is awaited."""
        return _Waiting(self, message)

    def now(self) -> str:
        return format_ts(self.clock())

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
        if self._db is not None:
            self._db.close()
            self._db = None


class _Waiting:
    """Context.waiting: shows the indicator unless a wait already shows one."""

    __slots__ = ("ctx", "message", "shown")

    def __init__(self, ctx: Context, message: str) -> None:
        self.ctx, self.message = ctx, message
        self.shown: Any = None  # what the indicator returned: a context manager

    def __enter__(self) -> None:
        if self.ctx.indicator is not None and self.ctx._shown is None:
            self.shown = self.ctx.indicator(self.message)
            self.shown.__enter__()
            self.ctx._shown = self.shown

    def __exit__(self, *exc: object) -> None:
        if self.shown is not None:
            self.ctx._shown = None
            self.shown.__exit__(*exc)
