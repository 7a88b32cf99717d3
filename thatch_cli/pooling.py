"""Vectors of one text in every pooling of a sentence-transformers model,
from one forward pass, and the calibration that puts their scores on one
scale (embeddings.py explains why spaces include the pooling).

A cosine is not comparable across poolings: MiniLM's CLS vectors, for one,
all lie close together, so any CLS row would outscore every mean-pooled
one. So each other pooling's scores are mapped onto the model's own scale
by matching the two score distributions on a fixed reference set (queries
against developer notes, embedded once per model and remembered): a row of
another pooling ranks where a row of the model's own pooling with the same
standing would. Within one pooling the order never changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

NATIVE = "native"
POOLINGS = ("cls", "mean")

REFERENCE_QUERIES = (
    "how do I publish a new release", "which database do we use", "how to run the test suite",
    "where are the deployment credentials", "what is the code style", "why is the build failing on CI",
    "how do I set up a new laptop", "what port does the staging server use",
)
REFERENCE_NOTES = (
    "Tag the commit, build the wheel and upload it to PyPI with twine.",
    "We store everything in SQLite with WAL so readers never block the writer.",
    "Run pytest with -x locally; CI runs the whole suite on three Python versions.",
    "Deploy keys live in the team vault under infra/deploy; never commit them.",
    "Run ruff format before committing; CI rejects unformatted files.",
    "The nightly build fails when the network mock is not reset between tests.",
    "New laptops need the VPN profile and an SSH key registered with the git host.",
    "Staging listens on port 8443, production on 443 behind the load balancer.",
    "Use structlog with JSON output in production and pretty output locally.",
    "The frontend is built with Vite; run npm ci before the first build.",
    "Feature flags are read from LaunchDarkly at startup and cached for five minutes.",
    "Database migrations run with alembic upgrade head as part of the deploy job.",
    "The API rate limit is 100 requests per minute per token.",
    "Docs are published from the main branch to the internal wiki every night.",
    "Prefer dataclasses over dicts for records passed between modules.",
    "Backups of the production database are taken hourly and kept for 30 days.",
)


def pooling_of(model: Any) -> str | None:
    """The pooling of a transformer + pooling (+ normalise) pipeline, else None
    (a model with more layers after pooling has its own space only)."""
    modules = [type(m).__name__ for m in model]
    if modules not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return None
    pooling = model[1]
    mode = getattr(pooling, "pooling_mode", None)
    if mode is None and hasattr(pooling, "get_pooling_mode_str"):
        mode = pooling.get_pooling_mode_str()
    return str(mode).lower() if mode else None


def pooled(model: Any, texts: list[str]) -> dict[str, "np.ndarray"] | None:
    """pooling (NATIVE, 'cls', 'mean') -> L2-normalised float32 vectors of
    `texts`, one row each, from one forward pass; None when the model's
    pipeline allows its own pooling only."""
    import numpy as np

    native = pooling_of(model)
    if native is None:
        return None
    outputs = model.encode(texts, output_value=None, convert_to_numpy=False, normalize_embeddings=False,
                           show_progress_bar=False, batch_size=32)
    rows: dict[str, list] = {NATIVE: [], "cls": [], "mean": []}
    for out in outputs:
        tokens = out["token_embeddings"].float()
        mask = out["attention_mask"].float().unsqueeze(-1)
        rows[NATIVE].append(out["sentence_embedding"].float())
        rows["cls"].append(tokens[0])
        rows["mean"].append((tokens * mask).sum(0) / mask.sum().clamp(min=1.0))
    vectors = {}
    for pooling, found in rows.items():
        matrix = np.stack([v.detach().cpu().numpy() for v in found]).astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        vectors[pooling] = matrix / norms
    if native in vectors:
        vectors[native] = vectors[NATIVE]
    return vectors


def calibration(model: Any, query_prefix: str) -> dict[str, tuple[float, float]]:
    """pooling -> (scale, offset) mapping its query-to-passage cosines onto
    the model's own pooling's scale (the own pooling maps to (1, 0))."""
    queries = pooled(model, [query_prefix + q for q in REFERENCE_QUERIES])
    notes = pooled(model, list(REFERENCE_NOTES))
    if queries is None or notes is None:
        return {}
    reference = (queries[NATIVE] @ notes[NATIVE].T).ravel()
    mapping = {}
    for pooling in POOLINGS:
        scores = (queries[pooling] @ notes[pooling].T).ravel()
        spread = float(scores.std())
        scale = float(reference.std()) / spread if spread > 1e-9 else 1.0
        mapping[pooling] = (scale, float(reference.mean()) - scale * float(scores.mean()))
    return mapping
