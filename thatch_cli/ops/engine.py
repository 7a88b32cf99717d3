"""Where vectors come from for an operation: the warm daemon, or the same
work done in this process. recall, remember, reindex and import call an
engine and never care which one they got (Context.engine() picks). It sits
above the daemon's client and the ranking it shares with the daemon.

Both engines run the same code for the same request (the daemon calls
ranking.dense.semantic on a cached StoreVectors, this process on a freshly
loaded one), so results are identical either way. Vectors cross as float32 BLOBs
(bytes), exactly what the `embedding` column stores, so the daemon path
needs no numpy in the client.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..memory.records import Hit
from ..support.errors import ModelUnavailable

# How long a caller that does not wait for the model waits for the daemon's
# answer (a query embed plus a cached search take milliseconds).
READY_TIMEOUT = 5.0

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2.5 ms to import typing
if TYPE_CHECKING:
    from typing import Callable, Mapping, Protocol, Sequence

    from ..memory.filter import Filter

    class Host(Protocol):
        """What an engine needs from its caller (a Context is one)."""

        env: Mapping[str, str]
        wait_for_model: bool
        degrade_under_load: bool

        @property
        def db_path(self) -> Path: ...

        def db(self): ...

        def embedder(self): ...

        def notice(self, text: str) -> None: ...

        def waiting(self, message: str): ...


# What a person sees while an engine waits (Context.waiting; only after half a second).
# The daemon's first request waits for the model to load (11-24 s measured); saying it
# happens once tells a new user the next command will not wait again. Short enough
# that the spinner's line fits 80 columns (a wrapped line is not erased).
IN_PROCESS = "loading the embedding model in this process"
DAEMON = "waiting for the model daemon (the first use loads it, once)"
# The first use of a model on a machine also measures it (calibration/fit.py, a few seconds).
MEASURING = "measuring the embedding model (once per model)"

# Plain classes, not dataclasses: building a dataclass compiles its methods
# at import, ~0.4 ms each on every `thatch recall`.


class Answer:
    """What a search returns: the model's name (as stored in the `model`
    column) and dimension, the hits, how many rows of the searched stores the
    model cannot rank, and for a passage search the passage's vector."""

    __slots__ = ("model", "dim", "hits", "unranked", "vector")

    def __init__(self, model: str, dim: int, hits: list[Hit] | None = None, unranked: int = 0,
                 vector: bytes | None = None) -> None:
        self.model, self.dim, self.hits, self.unranked, self.vector = model, dim, hits or [], unranked, vector

    def __repr__(self) -> str:
        return f"Answer(model={self.model!r}, dim={self.dim}, hits={self.hits!r}, unranked={self.unranked})"


class Embedded:
    """Vectors of passages, one float32 BLOB each, and the model that made them."""

    __slots__ = ("model", "dim", "blobs")

    def __init__(self, model: str, dim: int, blobs: list[bytes]) -> None:
        self.model, self.dim, self.blobs = model, dim, blobs

    def __repr__(self) -> str:
        return f"Embedded(model={self.model!r}, dim={self.dim}, count={len(self.blobs)})"


class LocalEngine:
    """Embed and search in this process with ctx.embedder()."""

    def __init__(self, ctx: Host) -> None:
        self.ctx = ctx

    def search(
        self,
        where: Filter,
        *,
        query: str | None = None,
        passage: str | None = None,
        limit: int = 10,
        min_score: float | None = None,
        inventory: bool = False,
        meanwhile: Callable[[], None] | None = None,
    ) -> Answer:
        """Rank what `where` keeps against a query or a passage (its vector is returned
        too): the rows of the model's embedding space, each hit scored on the
        calibrated scale (`min_score` too). `meanwhile` is work the caller
        wants done during the search (run first, in-process)."""
        from ..calibration.fit import of as calibration_of
        from ..model.embeddings import model_space
        from ..ranking.dense import db_loader, semantic, to_blob
        from ..storage.vectors import inventory as vector_inventory

        if meanwhile is not None:
            meanwhile()
        embedder = self.ctx.embedder()
        from ..model import torch_threads

        with self.ctx.waiting(IN_PROCESS):
            if query is not None:  # one thread, as the daemon embeds a query (model/torch_threads.py)
                vector = torch_threads.run(1, embedder.embed_query, query)
            else:
                vector = torch_threads.run(None, embedder.embed_passages, [passage or ""])[0]
        with self.ctx.waiting(MEASURING):
            calibration = calibration_of(embedder)
        space = model_space(embedder.name)
        dim = int(vector.shape[-1])
        db = self.ctx.db()
        unranked = 0
        if inventory and where.stores:
            unranked = sum(count for model, length, count in vector_inventory(db, list(where.stores))
                           if length != 4 * dim or model_space(model) != space)
        hits = semantic(db_loader(db), where, vector, space, calibration,
                        "query" if query is not None else "passage", limit=limit, min_score=min_score)
        return Answer(embedder.name, dim, hits, unranked, to_blob(vector) if query is None else None)

    def embed_passages(self, texts: Sequence[str]) -> Embedded:
        from ..ranking.dense import to_blob

        embedder = self.ctx.embedder()
        with self.ctx.waiting(IN_PROCESS):
            vectors = embedder.embed_passages(list(texts))
        dim = int(vectors.shape[-1]) if len(texts) else self.model_info()[1]
        return Embedded(embedder.name, dim, [to_blob(v) for v in vectors])

    def embed_query(self, text: str) -> Embedded:
        from ..ranking.dense import to_blob

        embedder = self.ctx.embedder()
        with self.ctx.waiting(IN_PROCESS):
            vector = embedder.embed_query(text)
        return Embedded(embedder.name, int(vector.shape[-1]), [to_blob(vector)])

    @property
    def wants_save_hints(self) -> bool:
        return False

    def saved(self, memory, before: int, after: int, replaced: bool) -> None:
        """Nothing is cached in-process."""

    def model_info(self) -> tuple[str, int]:
        """(model name, dimension); loads the model."""
        embedder = self.ctx.embedder()
        with self.ctx.waiting(IN_PROCESS):
            probe = embedder.embed_query("dimension probe")
        return embedder.name, int(probe.shape[-1])

    def calibration(self):
        """The model's calibration (calibration/); loads the model the first time."""
        from ..calibration.fit import of as calibration_of

        embedder = self.ctx.embedder()
        with self.ctx.waiting(MEASURING):
            return calibration_of(embedder)

    def close(self) -> None:
        pass


class DaemonEngine:
    """Ask the daemon (starting it if needed); if it cannot serve, say so on
    one line and do the rest of the command in-process.

    A host that must not wait for the model (ctx.wait_for_model False: an
    agent's recall, the agent hook flush-tools) uses it only when a daemon already has it
    loaded: otherwise the daemon is started in the background and the call
    raises ModelUnavailable at once, so the caller degrades (keyword search)
    instead of waiting seconds for a model, here or in-process."""

    def __init__(self, ctx: Host) -> None:
        from ..daemon.client import REQUEST_TIMEOUT, Client

        self.ctx = ctx
        self.wait = ctx.wait_for_model
        self.client = Client(ctx.env, autostart=self.wait, timeout=REQUEST_TIMEOUT if self.wait else READY_TIMEOUT)
        self.local: LocalEngine | None = None

    def _fallback(self, reason: str) -> LocalEngine:
        self.client.close()
        self.ctx.notice(f"daemon unavailable ({reason}); embedding in-process")
        self.local = LocalEngine(self.ctx)
        return self.local

    def _call(self, op: str, meanwhile: Callable[[], None] | None = None, **fields):
        """(reply, payload) from the daemon, or None after falling back. A
        daemon that is not keeping up (client.Overloaded) makes the command
        degrade (keywords for recall, no vector for a save, reindexed
        later) unless it asked to embed no matter what (reindex): not load
        the model in one more process on a machine already out of breath."""
        from ..daemon.client import NotRunning, Overloaded, Unreachable
        from ..daemon.protocol import MODEL_LOADING, MODEL_UNAVAILABLE, ErrorReply

        try:
            with self.ctx.waiting(DAEMON):
                return self.client.call(op, meanwhile=meanwhile, **fields)
        except ErrorReply as err:
            if err.code in (MODEL_UNAVAILABLE, MODEL_LOADING):
                raise ModelUnavailable(err.message) from None
            if not self.wait:
                raise ModelUnavailable(f"daemon error ({err.code}: {err.message})") from None
            self._fallback(f"{err.code}: {err.message}")
        except Overloaded as err:
            if not self.wait or self.ctx.degrade_under_load:
                raise ModelUnavailable(f"the background model process is not keeping up: {err}") from None
            self._fallback(str(err))
        except NotRunning as err:
            if not self.wait:
                from ..daemon.warm import maybe_warm

                maybe_warm(self.ctx.env)
                raise ModelUnavailable("the embedding model is starting in the background") from None
            self._fallback(str(err))
        except Unreachable as err:
            if not self.wait:
                raise ModelUnavailable(f"daemon unavailable ({err})") from None
            self._fallback(str(err))
        return None

    def search(self, where: Filter, *, query: str | None = None, passage: str | None = None, limit: int = 10,
               min_score: float | None = None, inventory: bool = False,
               meanwhile: Callable[[], None] | None = None) -> Answer:
        """Like LocalEngine.search; `meanwhile` runs while the daemon works.
        (The daemon always counts unranked rows: it has them cached.)"""
        if meanwhile is not None:
            meanwhile = _once(meanwhile)
        if self.local is None:
            got = self._call("search", meanwhile, db=os.path.abspath(self.ctx.db_path), filter=where.to_json(),
                             query=query, passage=passage, limit=limit, min_score=min_score, wait=self.wait)
            if got is not None:
                reply, payload = got
                hits = [Hit(store, slug, float(score), "semantic", float(cosine))
                        for store, slug, score, cosine in reply["hits"]]
                return Answer(reply["model"], reply["dim"], hits, reply["unranked"], payload or None)
        assert self.local is not None
        return self.local.search(where, query=query, passage=passage, limit=limit, min_score=min_score,
                                 inventory=inventory, meanwhile=meanwhile)

    def embed_passages(self, texts: Sequence[str]) -> Embedded:
        if self.local is None:
            got = self._call("embed", texts=list(texts), kind="passage")
            if got is not None:
                from ..daemon.protocol import split_vectors

                reply, payload = got
                return Embedded(reply["model"], reply["dim"], split_vectors(payload, reply["dim"]))
        assert self.local is not None
        return self.local.embed_passages(texts)

    def embed_query(self, text: str) -> Embedded:
        if self.local is None:
            got = self._call("embed", texts=[text], kind="query")
            if got is not None:
                from ..daemon.protocol import split_vectors

                reply, payload = got
                return Embedded(reply["model"], reply["dim"], split_vectors(payload, reply["dim"]))
        assert self.local is not None
        return self.local.embed_query(text)

    @property
    def wants_save_hints(self) -> bool:
        return self.local is None

    def saved(self, memory, before: int, after: int, replaced: bool) -> None:
        """Tell the daemon about a memory just saved, moving its store from
        version `before` to `after`, so it patches its cached matrix instead
        of reloading the store. Fire and forget: the daemon checks the
        versions, and the database stays the truth if the hint is lost."""
        if self.local is None:
            from ..memory.fields import FILTERED

            self.client.notify("saved", memory.embedding or b"", db=os.path.abspath(self.ctx.db_path),
                               store=memory.store, slug=memory.slug, branch=memory.branch,
                               archived=bool(memory.archived), model=memory.model,
                               fields={f.name: f.store(getattr(memory, f.name)) for f in FILTERED},
                               before=before, after=after, replaced=replaced)

    def model_info(self) -> tuple[str, int]:
        if self.local is None:
            got = self._call("info")
            if got is not None:
                return got[0]["model"], got[0]["dim"]
        assert self.local is not None
        return self.local.model_info()

    def calibration(self):
        """The model's calibration, as the daemon measured it when it loaded the model."""
        if self.local is None:
            got = self._call("info")
            if got is not None:
                from ..calibration import Calibration

                found = Calibration.from_json(got[0]["calibration"])
                if found is not None:
                    return found
                return Calibration.identity(got[0]["model"])
        assert self.local is not None
        return self.local.calibration()

    def close(self) -> None:
        self.client.close()


def _once(task: Callable[[], None]) -> Callable[[], None]:
    """`task`, run at most once however often it is called (a daemon that
    fails after running it hands the search over to this process)."""
    pending = [task]

    def run() -> None:
        if pending:
            pending.pop()()

    return run


def make_engine(ctx: Host, use_daemon: bool) -> DaemonEngine | LocalEngine:
    return DaemonEngine(ctx) if use_daemon else LocalEngine(ctx)
