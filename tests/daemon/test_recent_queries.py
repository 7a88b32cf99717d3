"""The prompt hook asks for one prompt up to three times in a row (early, its
recall nudge, then its learned rules): the daemon's model embeds it once and
serves the repeats from memory."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from thatch_cli.daemon.model import RECENT_QUERIES, Model
from thatch_cli.daemon.protocol import ErrorReply
from thatch_cli.support.errors import ThatchError


class Counting:
    name = "counting"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def embed_query(self, text: str):
        self.calls.append(text)
        return np.array([float(len(text)), 1.0], dtype=np.float32)


def _model() -> tuple[Model, Counting]:
    model = Model({})
    model.embedder = embedder = Counting()  # type: ignore[assignment]
    model.ready.set()
    return model, embedder


def test_a_repeated_query_is_embedded_once_and_a_caller_cannot_spoil_it():
    model, embedder = _model()
    first = model.embed_query("how do we release?")
    first *= 0  # a caller scaling its vector in place
    again = model.embed_query("how do we release?")
    assert embedder.calls == ["how do we release?"]
    assert again.tolist() == [18.0, 1.0]
    model.close()


def test_only_the_last_few_queries_are_kept():
    model, embedder = _model()
    for n in range(RECENT_QUERIES + 1):
        model.embed_query(f"query {n}")
    model.embed_query("query 0")  # the oldest was dropped
    model.embed_query(f"query {RECENT_QUERIES}")  # the newest was kept
    assert embedder.calls.count("query 0") == 2 and embedder.calls.count(f"query {RECENT_QUERIES}") == 1
    model.close()


class Slow(Counting):
    """Takes a while per query, as MiniLM does on a busy machine."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.release = threading.Event()

    def embed_query(self, text: str):
        self.started.set()
        self.release.wait(10)
        return super().embed_query(text)


def test_a_query_asked_while_it_is_being_embedded_is_embedded_once():
    """The prompt hook asks for its prompt early (embed_ahead) and again in its
    search: the second waits for the first instead of queueing a second embed."""
    model = Model({})
    model.embedder = embedder = Slow()  # type: ignore[assignment]
    model.ready.set()
    answers: list = []
    early = threading.Thread(target=lambda: answers.append(model.embed_query("how do we release?")))
    early.start()
    assert embedder.started.wait(10)
    late = threading.Thread(target=lambda: answers.append(model.embed_query("how do we release?")))
    late.start()
    time.sleep(0.2)  # the late caller is waiting now
    embedder.release.set()
    early.join(10)
    late.join(10)
    assert embedder.calls == ["how do we release?"]
    assert [a.tolist() for a in answers] == [[18.0, 1.0], [18.0, 1.0]]
    answers[0] *= 0  # each caller has its own copy
    assert answers[1].tolist() == [18.0, 1.0]
    model.close()


class Failing(Counting):
    def embed_query(self, text: str):
        super().embed_query(text)
        raise ThatchError("the model broke")


def test_a_failed_embed_is_not_remembered():
    model = Model({})
    model.embedder = embedder = Failing()  # type: ignore[assignment]
    model.ready.set()
    for _ in range(2):
        with pytest.raises(ErrorReply):
            model.embed_query("how do we release?")
    assert embedder.calls == ["how do we release?", "how do we release?"]
    model.close()
