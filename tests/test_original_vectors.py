"""Rows the original thatch wrote are one vector space with ours.

The original embeds bge-small-en-v1.5 with transformers.js: mean pooling
over the attention mask, L2 normalisation, the BGE query prefix on queries
only, and records `Xenova/bge-small-en-v1.5`. BGE cannot be downloaded
here, so a hub cache entry named BAAI/bge-small-en-v1.5 holds the bundled
MiniLM's weights, with BGE's own pooling declaration (CLS); the original's
rows are built from the same weights the original's way (transformers
directly, not sentence-transformers). thatch must embed that model the
original's way too, so both tools' rows on one file are compared,
deduplicated and recalled, and nothing is re-embedded."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from thatch_cli import calibration
from thatch_cli.memory.records import Memory
from thatch_cli.model.embeddings import BGE_QUERY_PREFIX, SentenceTransformerEmbedder, model_space
from thatch_cli.ops.dedup import duplicates
from thatch_cli.ops.hygiene import report
from thatch_cli.ops.recall import recall
from thatch_cli.ops.reindex import reindex
from thatch_cli.ops.remember import remember
from thatch_cli.support.slugs import passage_text, slugify

pytestmark = pytest.mark.model

REVISION = "0123456789abcdef0123456789abcdef01234567"
ORIGINAL_NOTES = {
    "Deploy freeze": "No production deploys on Fridays after 2pm; the on-call lead must approve any exception.",
    "Friday deploy freeze": "No deploys to production on Fridays after 2pm; any exception needs the on-call"
                            " lead's approval.",
    "Release process": "Tag the commit, build the wheel and upload it to PyPI with twine.",
    "Database choice": "We store everything in SQLite with WAL so readers never block the writer.",
}


@pytest.fixture(scope="module")
def bge_cache(minilm_path, tmp_path_factory) -> Path:
    """A hub cache holding 'BAAI/bge-small-en-v1.5' (MiniLM's weights, BGE's CLS pooling declaration)."""
    hub = tmp_path_factory.mktemp("hf") / "hub"
    repo = hub / "models--BAAI--bge-small-en-v1.5"
    snapshot = repo / "snapshots" / REVISION
    shutil.copytree(minilm_path, snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REVISION)
    (snapshot / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": 384, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False,
        "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}))
    return hub


def original_vectors(folder: Path, texts: list[str]) -> np.ndarray:
    """What the original's transformers.js pipeline gives: mean pooling over
    the attention mask, then L2 normalisation."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder)
    with torch.no_grad():
        batch = tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
        tokens = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        mean = (tokens * mask).sum(1) / mask.sum(1)
        return torch.nn.functional.normalize(mean, dim=-1).numpy().astype(np.float32)


def cls_vectors(folder: Path, texts: list[str]) -> np.ndarray:
    """What sentence-transformers gives for the folder as it declares itself (CLS pooling)."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(folder), device="cpu").encode(texts, normalize_embeddings=True)


@pytest.fixture
def env(bge_cache, isolated_env, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(bge_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    values = {**isolated_env, "HF_HUB_CACHE": str(bge_cache), "HF_HUB_OFFLINE": "1"}
    # The stand-in model's calibration: measuring it takes a while, and the
    # mapping is not what this test is about (tests/test_calibration.py is).
    calibration.remember(values, calibration.Calibration(
        "BAAI/bge-small-en-v1.5#mean", dict.fromkeys(calibration.KINDS, calibration.IDENTITY_CURVE),
        sample=calibration.sample_version()))
    return values


def write_original_rows(ctx, folder: Path, extra: dict[str, tuple[str, str]] | None = None) -> dict[str, np.ndarray]:
    """The original's memories in store s, as its memory_remember writes them."""
    texts = {label: passage_text(label, body) for label, body in ORIGINAL_NOTES.items()}
    vectors = dict(zip(texts, original_vectors(folder, list(texts.values()))))
    db = ctx.db()
    for label, text in texts.items():
        db.save(Memory(store="s", slug=slugify(label), label=label, content=text, model="Xenova/bge-small-en-v1.5",
                       embedding=vectors[label].astype("<f4").tobytes(), created_at="2026-01-01T00:00:00.000Z",
                       updated_at="2026-01-01T00:00:00.000Z"), overwrite=False, archived=None)
    return vectors


def test_bge_is_embedded_the_original_way(env, bge_cache):
    folder = bge_cache / "models--BAAI--bge-small-en-v1.5" / "snapshots" / REVISION
    embedder = SentenceTransformerEmbedder("BAAI/bge-small-en-v1.5", env=env)
    assert embedder.name == "BAAI/bge-small-en-v1.5#mean"
    assert model_space(embedder.name) == model_space("Xenova/bge-small-en-v1.5")
    text = passage_text("Deploy freeze", ORIGINAL_NOTES["Deploy freeze"])
    ours, theirs = embedder.embed_passages([text])[0], original_vectors(folder, [text])[0]
    assert float(ours @ theirs) > 0.9999
    query = "can I ship the release to prod this friday afternoon?"
    assert float(embedder.embed_query(query) @ original_vectors(folder, [BGE_QUERY_PREFIX + query])[0]) > 0.9999
    # The folder's CLS declaration would give other vectors: the pooling really changed.
    assert float(cls_vectors(folder, [text])[0] @ theirs) < 0.99


def test_the_originals_rows_are_compared_deduplicated_and_recalled(env, bge_cache, make_ctx):
    folder = bge_cache / "models--BAAI--bge-small-en-v1.5" / "snapshots" / REVISION
    ctx = make_ctx(embedder=SentenceTransformerEmbedder("BAAI/bge-small-en-v1.5", env=env))
    write_original_rows(ctx, folder)
    remember(ctx, "Run the tests with `uv run pytest -q` from the repository root.", "Test command", store="s")

    found = duplicates(ctx, "s")
    assert found.scan.compared == 5 and found.scan.skipped_other_model == 0 and found.scan.without_vector == 0
    assert [(p.a.slug, p.b.slug) for p in found.scan.pairs] == [("deploy-freeze", "friday-deploy-freeze")]
    hygiene = report(ctx, "s").duplicates.pairs
    assert [(p.a.slug, p.b.slug) for p in hygiene] == [("deploy-freeze", "friday-deploy-freeze")]

    outcome = recall(ctx, "can I ship the release to prod this friday afternoon?", store="s", mode="semantic")
    assert outcome.notices == []  # nothing to reindex
    assert outcome.results[0].memory.slug in ("deploy-freeze", "friday-deploy-freeze")

    saved = remember(ctx, "No production deploys on Friday after 2pm; exceptions need the on-call lead.",
                     "Friday freeze", store="s")
    assert "deploy-freeze" in [m.slug for m, _ in saved.similar]

    assert reindex(ctx).embedded == 0  # the original's rows are left as it wrote them
    models = dict(sqlite3.connect(env["THATCH_DB"]).execute("SELECT slug, model FROM entries"))
    assert models["deploy-freeze"] == "Xenova/bge-small-en-v1.5"
    assert models["test-command"] == "BAAI/bge-small-en-v1.5#mean"
    ctx.close()


def test_rows_pooled_another_way_are_reindexed_and_reindex_is_suggested_only_then(env, bge_cache, make_ctx):
    """An older thatch recorded BGE rows as 'BAAI/bge-small-en-v1.5' with CLS
    pooling: another space. recall says to reindex, reindex re-embeds exactly
    those, and afterwards nothing suggests it again."""
    folder = bge_cache / "models--BAAI--bge-small-en-v1.5" / "snapshots" / REVISION
    ctx = make_ctx(embedder=SentenceTransformerEmbedder("BAAI/bge-small-en-v1.5", env=env))
    write_original_rows(ctx, folder)
    text = passage_text("Old note", "Staging listens on port 8443.")
    ctx.db().save(Memory(store="s", slug="old-note", label="Old note", content=text, model="BAAI/bge-small-en-v1.5",
                         embedding=cls_vectors(folder, [text])[0].astype("<f4").tobytes(), created_at="t",
                         updated_at="t"), overwrite=False, archived=None)
    outcome = recall(ctx, "staging port", store="s")
    assert any("1 memory has no vector" in n and "reindex" in n for n in outcome.notices)
    assert reindex(ctx).embedded == 1
    assert recall(ctx, "staging port", store="s").notices == []
    assert reindex(ctx).embedded == 0
    ctx.close()
