"""Measuring a model on the calibration sample: its cosines on the
sample's pairs, their quantiles, and the curve onto the reference scale
(the package docstring explains the idea). Needs the model and numpy, so
it runs where the model is loaded: the daemon at start-up, the in-process
embedder on first use. About 500 texts: a second or two for a small model,
once per model and machine.

The pairs are weighted so that related and unrelated pairs each make up
half of the distribution: the curve is then as firm among related scores
(where the nudge and the near-duplicate cut-offs lie) as among unrelated
ones (where the relevance floor lies).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from . import HERE, KINDS, Calibration, Curve, reference

if TYPE_CHECKING:
    import numpy as np

# Quantiles compared per kind: every half percent of the weighted pairs.
GRID = 201


def _sample_bytes() -> bytes:
    return (HERE / "sample.json").read_bytes()


def sample_hash() -> str:
    return hashlib.sha256(_sample_bytes()).hexdigest()[:12]


def sample_items() -> list[dict[str, str]]:
    return json.loads(_sample_bytes())["items"]


def _queries(embedder: Any, texts: list[str]) -> "np.ndarray":
    import numpy as np

    batch = getattr(embedder, "embed_queries", None)
    return np.asarray(batch(texts) if batch else np.stack([embedder.embed_query(t) for t in texts]))


def pair_scores(embedder: Any) -> dict[str, tuple["np.ndarray", "np.ndarray"]]:
    """kind -> (cosines, related mask) over every pairing of the sample:
    queries against notes ("query"), notes against partners ("passage")."""
    import numpy as np

    from ..ranking.dense import normalise
    from ..support.slugs import passage_text

    items = sample_items()
    notes = [passage_text(i["label"], i["note"]) for i in items]
    partners = [passage_text(i["partner_label"], i["partner"]) for i in items]
    passages = normalise(np.asarray(embedder.embed_passages(notes + partners)))
    queries = normalise(_queries(embedder, [i["query"] for i in items]))
    count = len(items)
    related = np.eye(count, dtype=bool)
    found = {}
    for kind, left in (("query", queries), ("passage", passages[:count])):
        scores = left @ passages[count:].T if kind == "passage" else left @ passages[:count].T
        found[kind] = (scores.ravel().astype(np.float64), related.ravel())
    return found


def quantiles(scores: "np.ndarray", related: "np.ndarray", grid: int = GRID) -> list[float]:
    """The scores at `grid` evenly spaced probabilities of the distribution
    in which related and unrelated pairs weigh half each."""
    import numpy as np

    weights = np.where(related, 0.5 / related.sum(), 0.5 / (~related).sum())
    order = np.argsort(scores, kind="stable")
    ranked, weights = scores[order], weights[order]
    position = np.cumsum(weights) - weights / 2  # each score at the middle of its weight
    return np.interp(np.linspace(0.0, 1.0, grid), position, ranked).tolist()


def measure(embedder: Any) -> dict[str, list[float]]:
    """kind -> the embedder's quantiles on the sample."""
    return {kind: quantiles(*found) for kind, found in pair_scores(embedder).items()}


def curve(xs: list[float], ys: list[float]) -> Curve:
    """The monotone curve through (model quantile, reference quantile)
    pairs: repeated model quantiles keep their first point, and the ends
    run on to (-1, -1) and (1, 1) (opposite and identical texts), so a
    cosine beyond the sample's range still maps in order."""
    points: list[tuple[float, float]] = []
    for x, y in zip(xs, ys):
        if points and x <= points[-1][0]:
            continue
        points.append((x, max(y, points[-1][1]) if points else y))
    if points[0][0] > -1.0 and points[0][1] > -1.0:
        points.insert(0, (-1.0, -1.0))
    if points[-1][0] < 1.0 and points[-1][1] < 1.0:
        points.append((1.0, 1.0))
    return Curve([p[0] for p in points], [p[1] for p in points])


def fit(embedder: Any) -> Calibration:
    """The embedder's calibration onto the reference scale."""
    ref = reference()
    if ref["sample"] != sample_hash():
        raise RuntimeError("calibration/reference.json was measured on another sample; regenerate it")
    found = measure(embedder)
    return Calibration(embedder.name, {kind: curve(found[kind], ref[kind]) for kind in KINDS}, sample=ref["sample"])


def reference_document(embedder: Any) -> dict:
    """reference.json's content, measured with `embedder` (the reference model)."""
    measured = measure(embedder)
    return {"model": embedder.name.split("@")[0], "identity": embedder.name, "sample": sample_hash(),
            "probabilities": GRID, **{kind: [round(v, 6) for v in values] for kind, values in measured.items()}}
