"""The in-process engine (ops/engine.py): what a search reports beside its hits."""

from __future__ import annotations

from thatch_cli.memory.filter import Filter
from thatch_cli.model.embeddings import FakeEmbedder
from thatch_cli.ops.remember import remember


def test_rows_another_model_cannot_rank_are_counted_only_when_asked(make_ctx):
    """Counting the rows of other models reads every vector's header: a search
    that did not ask for the inventory does not pay for it."""
    with make_ctx(embedder=FakeEmbedder(64, name="model-a"), THATCH_DAEMON="0", THATCH_STORE="s") as ctx:
        remember(ctx, "Release steps", "tag, build, upload")
    with make_ctx(embedder=FakeEmbedder(64, name="model-b"), THATCH_DAEMON="0", THATCH_STORE="s") as ctx:
        engine = ctx.engine()
        assert engine.search(Filter(["s"]), query="release", inventory=True).unranked == 1
        assert engine.search(Filter(["s"]), query="release").unranked == 0
