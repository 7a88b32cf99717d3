"""The prompt hook embeds one prompt twice in a row (its recall nudge, then
its learned rules): the daemon's model serves the repeat from memory."""

from __future__ import annotations

import numpy as np

from thatch_cli.daemon.model import RECENT_QUERIES, Model


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
