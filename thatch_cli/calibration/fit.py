"""Measuring a model on the calibration sample: its cosines on the
sample's pairs, their quantiles, and the curve onto the reference scale
(the package docstring explains the idea). Needs the model and numpy, so
it runs where the model is loaded: the daemon at start-up, the in-process
embedder on first use. About 1,200 texts: a few seconds for a small model,
once per model and machine.

The scale is anchored on the unrelated pairs (every query with every other
item's note: about 160,000 of them), matched quantile by quantile up to
where only TAIL of them score higher, with the points packed towards that
top. So a score says how rarely two unrelated texts reach it, whatever the
model: the relevance floor and the nudge are cut-offs on the unrelated
texts a prompt or query meets, which is what they decide about. The scale
above that point, where unrelated pairs run out (a near-duplicate, a close
paraphrase), is matched on the related pairs that score above it. Matching
the related pairs everywhere would tie the scale to how the sample's
writers paraphrased: the sample's two halves, written apart, put
all-mpnet-base-v2's nudge cut-off at raw cosines 0.47 and 0.52 that way,
and at 0.456 and 0.461 anchored on the unrelated pairs
(docs/recall.md, "One scale for every model").
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from . import HERE, IDENTITY_CURVE, KINDS, Calibration, Curve, lookup, reference, remember, sample_version

if TYPE_CHECKING:
    import numpy as np

# The unrelated pairs set the scale up to where TAIL of them score higher;
# the related pairs above that point, at RELATED quantiles, set the rest.
TAIL = 50
RELATED = 101
SCHEME = f"unrelated to the top {TAIL}, then related at {RELATED} quantiles"


def _sample_bytes() -> bytes:
    return (HERE / "sample.json").read_bytes()


def sample_hash() -> str:
    """The sample and the way it is measured: a cached calibration of
    another version is measured again."""
    return hashlib.sha256(_sample_bytes() + SCHEME.encode()).hexdigest()[:12]


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

    from ..model.embeddings import normalise
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


def _tail_probabilities(count: int) -> "np.ndarray":
    """Evenly every percent to 99%, then log-spaced on towards the top,
    up to where TAIL of `count` scores lie above."""
    import numpy as np

    top = max(1.0 - TAIL / count, 0.99) if count else 0.99
    steps = np.logspace(-2, np.log10(max(1.0 - top, 1e-12)), 81)
    return np.unique(np.concatenate([np.linspace(0.0, 0.99, 100), 1.0 - steps]))


def quantiles(scores: "np.ndarray", related: "np.ndarray") -> list[float]:
    """The unrelated pairs' scores at _tail_probabilities, then the related
    pairs' that lie above the last of them, at RELATED even quantiles."""
    import numpy as np

    unrelated = scores[~related]
    low = np.quantile(unrelated, _tail_probabilities(unrelated.size))
    above = scores[related & (scores > low[-1])]
    high = np.quantile(above if above.size else low[-1:], np.linspace(0.0, 1.0, RELATED))
    return [*low.tolist(), *high.tolist()]


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
            "scheme": SCHEME, **{kind: [round(v, 6) for v in values] for kind, values in measured.items()}}


# Each embedder's calibration, once found: a model is looked up or measured once per embedder.
_FOUND: WeakKeyDictionary[Any, Calibration] = WeakKeyDictionary()


def of(embedder: Any) -> Calibration:
    """The calibration of an embedder: one that brings its own
    (`calibration()`) gives it; the test embedder (`on_scale`) is already on
    the scale; a model with an `env` is measured once per model and machine
    (cached there by identity); any other is the identity mapping."""
    own = getattr(embedder, "calibration", None)
    if own is not None:
        return own()
    if getattr(embedder, "on_scale", False):
        return Calibration(embedder.name, dict.fromkeys(KINDS, IDENTITY_CURVE), sample=sample_version())
    env = getattr(embedder, "env", None)
    if env is None:
        return lookup({}, embedder.name) or Calibration.identity(embedder.name)
    found = _FOUND.get(embedder)
    if found is None:
        found = lookup(env, embedder.name)
        if found is None:
            found = fit(embedder)
            remember(env, found)
        _FOUND[embedder] = found
    return found
