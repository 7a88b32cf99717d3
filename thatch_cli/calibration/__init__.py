"""Scores that mean the same with every model: each model's cosines mapped
onto one scale, so every cut-off (recall.floor, nudge.threshold,
duplicates.threshold) holds whichever model runs.

A raw cosine means something different per model: all-MiniLM-L6-v2 puts
unrelated texts near 0.1, BGE near 0.6, a model whose scores are squeezed
(0.5 + 0.5 x cosine) near 0.55. So each model is measured once on a bundled
calibration sample (sample.json: queries with the notes they ask about,
notes with a reworded or related partner, on topics none of the benchmarks
use) and its cosines are mapped through the quantiles of that sample onto
the reference model's: a cosine at the 90th percentile of one model's
sample scores becomes the reference's 90th percentile. The mapping is
monotone, so within one model the order of results never changes; for a
model that differs from the reference by any monotone transformation the
decisions are the reference's.

The scale is the reference model's cosine (all-MiniLM-L6-v2, frozen in
reference.json), so for that model a score is its cosine and settings
chosen for it keep their meaning. Two mappings per model: "query" (a
query against stored notes: recall, the prompt nudge, the relevance floor)
and "passage" (a note against notes: the near-duplicate warning, hygiene,
`thatch duplicates`).

Fitting needs the model and numpy (calibration/fit.py) and happens where
the model is loaded anyway: in the daemon when it starts, or in the
in-process embedder on first use. The result is cached per model identity
(`calibration.json` in thatch's cache folder); reading it here is standard
library only, for the light paths (`state` is what a status report shows).
"""

from __future__ import annotations

import json
import os
from bisect import bisect_left, bisect_right
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~2 ms
if TYPE_CHECKING:
    from typing import Any, Mapping

KINDS = ("query", "passage")
CACHE_FILE = "calibration.json"
MAX_MODELS = 32
HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def reference() -> dict:
    """The reference model's quantiles on the sample (reference.json):
    {"model", "sample", "scheme", "query": [...], "passage": [...]}."""
    with open(HERE / "reference.json", encoding="utf-8") as fh:
        return json.load(fh)


def sample_version() -> str:
    """Which sample the reference (and so every cached mapping) was measured on."""
    return reference()["sample"]


class Curve:
    """A monotone piecewise-linear map from xs to ys (both non-decreasing,
    xs strictly increasing), straight between knots and beyond the ends
    along the end segments."""

    __slots__ = ("xs", "ys")

    def __init__(self, xs: list[float], ys: list[float]) -> None:
        if len(xs) != len(ys) or len(xs) < 2 or any(b <= a for a, b in zip(xs, xs[1:])) or any(
                b < a for a, b in zip(ys, ys[1:])):
            raise ValueError("a calibration curve needs at least two knots, xs increasing, ys not decreasing")
        self.xs, self.ys = [float(x) for x in xs], [float(y) for y in ys]

    def __call__(self, x: float) -> float:
        return _interpolate(self.xs, self.ys, x)

    def inverse(self, y: float) -> float:
        """The least x mapped to y (thresholds on the scale, as raw cosines)."""
        xs, ys = self.xs, self.ys
        i = min(max(bisect_left(ys, y), 1), len(ys) - 1)
        if ys[i] == ys[i - 1]:
            return xs[i - 1]
        return xs[i - 1] + (y - ys[i - 1]) * (xs[i] - xs[i - 1]) / (ys[i] - ys[i - 1])

    def points(self) -> list[list[float]]:
        return [[round(x, 6), round(y, 6)] for x, y in zip(self.xs, self.ys)]


def _interpolate(xs: list[float], ys: list[float], x: float) -> float:
    i = min(max(bisect_right(xs, x), 1), len(xs) - 1)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 + (x - x0) * (y1 - y0) / (x1 - x0)


IDENTITY_CURVE = Curve([-1.0, 1.0], [-1.0, 1.0])


class Calibration:
    """One model's two curves (query, passage), raw cosine -> scale.
    `measured` is False for the identity a model gets when it cannot be
    measured (the test embedder, or a model never loaded on this machine)."""

    __slots__ = ("model", "curves", "measured", "sample")

    def __init__(self, model: str, curves: dict[str, Curve], measured: bool = True, sample: str | None = None) -> None:
        self.model, self.curves, self.measured = model, curves, measured
        self.sample = sample

    @classmethod
    def identity(cls, model: str) -> "Calibration":
        return cls(model, dict.fromkeys(KINDS, IDENTITY_CURVE), measured=False)

    def score(self, kind: str, cosine: float) -> float:
        """A raw cosine of `kind` ("query" or "passage") on the scale."""
        return self.curves[kind](cosine)

    def cosine(self, kind: str, score: float) -> float:
        """The raw cosine at which `kind`'s scores reach `score` on the scale."""
        return self.curves[kind].inverse(score)

    def to_json(self) -> dict:
        return {"model": self.model, "measured": self.measured, "sample": self.sample,
                **{kind: self.curves[kind].points() for kind in KINDS}}

    @classmethod
    def from_json(cls, data: Any) -> "Calibration | None":
        """The calibration `data` (to_json's shape) describes, or None when it
        is not one (a damaged or foreign cache entry)."""
        try:
            curves = {kind: Curve([p[0] for p in data[kind]], [p[1] for p in data[kind]]) for kind in KINDS}
            return cls(str(data["model"]), curves, bool(data.get("measured", True)), data.get("sample"))
        except (KeyError, TypeError, ValueError, IndexError):
            return None

    def __repr__(self) -> str:
        return f"Calibration({self.model!r}, measured={self.measured})"


def cache_path(env: Mapping[str, str]) -> Path:
    from ..support.paths import cache_dir

    return cache_dir(env) / CACHE_FILE


def lookup(env: Mapping[str, str], model: str) -> Calibration | None:
    """The calibration of `model` (an identity) on the current sample: the
    identity for the reference model itself, else the cached one, else None.
    Standard library only: a hook may call it."""
    from ..support.files import read_json_object

    if model == reference()["identity"] or model.startswith("fake:"):  # the test embedder is its own scale
        return Calibration(model, dict.fromkeys(KINDS, IDENTITY_CURVE), sample=sample_version())
    found = Calibration.from_json(read_json_object(cache_path(env)).get(model))
    if found is None or found.sample != sample_version() or not found.measured:
        return None
    return found


def remember(env: Mapping[str, str], calibration: Calibration) -> None:
    """Cache a measured calibration (a failed write only means measuring again)."""
    from ..support.files import read_json_object, write_json_cache

    path = cache_path(env)
    data = read_json_object(path)
    data.pop(calibration.model, None)
    data[calibration.model] = calibration.to_json()
    write_json_cache(path, dict(list(data.items())[-MAX_MODELS:]))


def state(env: Mapping[str, str]) -> dict:
    """The configured model's calibration as a JSON-able dict (for a status
    report): whether it is measured, and each cut-off setting both on the
    scale and as the raw cosine it means for this model. Never loads the
    model or numpy, and never fingerprints a model folder not seen before."""
    from ..model.embeddings import model_identity
    from ..support.settings import value

    configured = value(env, "model", strict=False)
    identity = model_identity(configured, env, compute=False)
    found = lookup(env, identity) if identity else None
    cutoffs = {}
    for key, kind in (("recall.floor", "query"), ("nudge.threshold", "query"), ("duplicates.threshold", "passage")):
        setting = value(env, key, strict=False)
        cutoffs[key] = {"value": setting, "kind": kind,
                        "cosine": round(found.cosine(kind, setting), 4) if found else None}
    return {
        "model": configured,
        "identity": identity,
        "calibrated": found is not None,
        "reference": reference()["model"],
        "sample": sample_version(),
        "cache": os.fspath(cache_path(env)),
        "cutoffs": cutoffs,
        "curves": {kind: found.curves[kind].points() for kind in KINDS} if found else None,
    }

