"""How well DUPLICATE_THRESHOLD separates duplicates from look-alikes, measured
with the real all-MiniLM-L6-v2 on tests/data/duplicate_pairs.json: pairs of
short developer memories labelled duplicate (the same fact in nearly the same
words, or reworded) or not (the same template stating another fact, or
another fact on the same topic).

Each text is embedded exactly as `thatch remember CONTENT` embeds it: the
label derived from the content, then passage_text(label, body), as a
passage. `python bench/duplicate_threshold.py` prints a sweep of cut-offs. The default model,
BAAI/bge-small-en-v1.5, cannot be loaded offline, so only MiniLM is measured.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from thatch_cli.model.embeddings import SentenceTransformerEmbedder
from thatch_cli.ops.remember import resolve_label
from thatch_cli.support.settings import DUPLICATE_THRESHOLD
from thatch_cli.support.slugs import passage_text

pytestmark = pytest.mark.model

PAIRS = json.loads((Path(__file__).parents[1] / "data" / "duplicate_pairs.json").read_text(encoding="utf-8"))
MIN_PRECISION = 0.85
MIN_RECALL = 0.70
SWEEP = np.round(np.arange(0.70, 0.951, 0.025), 3)


def stored_text(content: str) -> str:
    label, body = resolve_label(None, content)
    return passage_text(label, body)


def pair_scores(embedder) -> np.ndarray:
    """Cosine of each pair, as the write-time warning computes it."""
    a = embedder.embed_passages([stored_text(p["a"]) for p in PAIRS])
    b = embedder.embed_passages([stored_text(p["b"]) for p in PAIRS])
    return np.einsum("ij,ij->i", a, b)


@pytest.fixture(scope="module")
def scores(minilm_path) -> np.ndarray:
    return pair_scores(SentenceTransformerEmbedder(minilm_path))


def quality(scores: np.ndarray, threshold: float) -> tuple[float, float, int, int]:
    """(precision, recall, warnings raised, warnings wrongly raised) of warning at `threshold`."""
    truth = np.array([p["duplicate"] for p in PAIRS])
    warned = scores >= threshold
    hits = int((warned & truth).sum())
    precision = hits / warned.sum() if warned.any() else 1.0
    return precision, hits / truth.sum(), int(warned.sum()), int((warned & ~truth).sum())


def test_the_data_set_is_balanced_and_well_formed():
    kinds = {"exact": True, "reword": True, "same-template": False, "related": False}
    assert len(PAIRS) >= 60
    for pair in PAIRS:
        assert set(pair) == {"a", "b", "duplicate", "kind"} and kinds[pair["kind"]] is pair["duplicate"]
        assert pair["a"] != pair["b"] and resolve_label(None, pair["a"])[0] != resolve_label(None, pair["b"])[0]
    assert {kind: sum(p["kind"] == kind for p in PAIRS) >= 15 for kind in kinds} == dict.fromkeys(kinds, True)


def test_the_warning_threshold_is_precise_and_finds_most_duplicates(scores):
    precision, recall, _, _ = quality(scores, DUPLICATE_THRESHOLD)
    assert precision >= MIN_PRECISION and recall >= MIN_RECALL, (precision, recall)
    # Another fact on the same topic is never close.
    related = [score for score, pair in zip(scores, PAIRS) if pair["kind"] == "related"]
    assert max(related) < DUPLICATE_THRESHOLD
