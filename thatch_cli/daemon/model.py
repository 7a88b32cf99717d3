"""The daemon's embedding model: loaded once in the background, used from
one worker thread."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Mapping

from ..model import torch_threads
from . import runtime
from .log import log
from .protocol import MODEL_UNAVAILABLE, ErrorReply

if TYPE_CHECKING:
    from ..calibration import Calibration
    from ..model.embeddings import Embedder

RECENT_QUERIES = 8  # query vectors kept for a repeated embed of the same text


class Model:
    """The embedder, loaded once in the background. Every encode runs on one
    long-lived worker thread: calls are serialised, and torch's OpenMP
    thread team is created once instead of by each connection's thread
    (which costs ~10 ms per request)."""

    def __init__(self, env: Mapping[str, str], rundir: str | None = None) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.env = env
        self.rundir = rundir
        self.name = runtime.model_name(env)
        self.ready = threading.Event()
        self.embedder: Embedder | None = None
        self.calibration: Calibration | None = None  # once loaded
        self.dim = 0
        self.error: str | None = None
        self.load_seconds: float | None = None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model")
        from collections import OrderedDict

        self._recent: OrderedDict[str, Any] = OrderedDict()
        self._pending: dict[str, Future[Any]] = {}  # queries being embedded now
        self._recent_lock = threading.Lock()

    def start_loading(self) -> None:
        self._worker.submit(self.load)

    def load(self) -> None:
        started = time.monotonic()
        try:
            from ..calibration.fit import of as calibration_of
            from ..model.embeddings import embedder_from_env
            from ..support.errors import ThatchError

            try:
                from .memory import page_out_libraries

                embedder = embedder_from_env(self.env)
                int(embedder.dim)  # builds the model (imports, weights) without running it
                page_out_libraries()  # set-up code leaves memory; the warm-up brings back what encoding uses
                probe = embedder.embed_query("dimension probe")  # warms the model
                self.calibration = calibration_of(embedder)  # measured once per model and machine
                self.embedder, self.dim = embedder, int(probe.shape[-1])
                if embedder.name != self.name:
                    log(f"model reports name {embedder.name!r}, expected {self.name!r}")
                    self.name = embedder.name
            except ThatchError as exc:
                self.error = exc.message
            except Exception as exc:  # a broken install must not kill the daemon silently
                self.error = f"cannot load embedding model: {type(exc).__name__}: {exc}"
        finally:
            self.load_seconds = time.monotonic() - started
            from .memory import trim

            trim()  # loading allocates and frees far more than the model keeps
            self.ready.set()
        if self.error:
            log(f"model {self.name} unavailable: {self.error}")
        else:
            log(f"model {self.name} loaded in {self.load_seconds:.1f}s (dim {self.dim})")
        self._mark_failure()

    def _mark_failure(self) -> None:
        """Leave a note so the shell hook stops respawning a daemon for a
        model that cannot load (commands still try, and fall back)."""
        if not self.rundir:
            return
        from .warm import FAILED

        path = os.path.join(self.rundir, FAILED)
        try:
            if self.error:
                from pathlib import Path

                from ..support.files import replace_atomically

                replace_atomically(Path(path), f"{self.name}\n{self.error}\n", 0o600, durable=False)
            elif os.path.exists(path):
                os.unlink(path)
        except OSError:
            pass

    def get(self):
        self.ready.wait()
        if self.embedder is None:
            raise ErrorReply(MODEL_UNAVAILABLE, self.error or "model not loaded")
        return self.embedder

    def _run(self, fn, *args, threads: int | None = None):
        from ..support.errors import ThatchError

        try:
            return self._worker.submit(torch_threads.run, threads, fn, *args).result()
        except ThatchError as exc:
            raise ErrorReply(MODEL_UNAVAILABLE, exc.message) from None

    # A query on one torch thread, a batch on all of them (model/torch_threads.py).

    def embed_query(self, text: str) -> Any:
        # One prompt is asked for up to three times in a row (the prompt hook's
        # early embed, its recall nudge, its learned rules): the last few are
        # kept, and a caller asking while the same text is being embedded waits
        # for that one instead of queueing a second.
        with self._recent_lock:
            if text in self._recent:
                self._recent.move_to_end(text)
                return self._recent[text].copy()  # a caller may scale its own in place
            pending = self._pending.get(text)
            if pending is None:
                self._pending[text] = mine = Future[Any]()
        if pending is not None:
            return pending.result().copy()
        try:
            vector = self._run(self.get().embed_query, text, threads=1)
        except BaseException as exc:
            with self._recent_lock:
                del self._pending[text]
            mine.set_exception(exc)
            raise
        with self._recent_lock:
            del self._pending[text]
            self._recent[text] = vector
            while len(self._recent) > RECENT_QUERIES:
                self._recent.popitem(last=False)
        mine.set_result(vector)
        return vector.copy()

    def embed_passages(self, texts: list[str]):
        return self._run(self.get().embed_passages, texts)

    def close(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)
