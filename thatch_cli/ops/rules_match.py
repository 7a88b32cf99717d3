"""Matching text against learned rules' stored vectors, on the calibrated scale.

The original compares raw cosines of its own model (0.60 to fire, 0.85 to
count as the same rule). Here every cosine goes through the model's
calibration (calibration/), so one cut-off holds for every model: a prompt
against a matcher is a "query" score, a statement against a statement a
"passage" score. A row embedded by another model (the original's BGE while
thatch runs MiniLM) is embedded again for the comparison, never rewritten:
the original still ranks it with its own vector.

Standard library only (vectors are float32 BLOBs read with `array`): the
prompt hook scores matchers through here with the daemon's vectors.
"""

from __future__ import annotations

import math
import sys
from array import array

from ..model.embeddings import model_space

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2 ms to import typing
if TYPE_CHECKING:
    from typing import Any, Callable, Sequence

MATCH_THRESHOLD = 0.45  # calibrated: the memory nudge's cut-off (0.1% of unrelated pairs reach it)
SAME_THRESHOLD = 0.85  # calibrated passage score: the near-duplicate cut-off memories use
FIRE_LIMIT = 5  # matchers considered and items shown per kind, as the original


def vector(blob: bytes) -> array:
    values = array("f")
    values.frombytes(blob[: len(blob) - len(blob) % 4])
    if sys.byteorder == "big":  # stored little-endian, as numpy's "<f4" and the original's Float32Array write them
        values.byteswap()
    return values


def cosine(a: array, b: array) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm and math.isfinite(norm) else 0.0


class Space:
    """The running model's vectors: its name, width, calibration, and how to
    embed passages (for rows another model embedded)."""

    __slots__ = ("model", "dim", "space", "calibration", "embed_passages")

    def __init__(self, model: str, dim: int, calibration: Any,
                 embed_passages: Callable[[list[str]], list[bytes]]) -> None:
        self.model, self.dim, self.space = model, dim, model_space(model)
        self.calibration, self.embed_passages = calibration, embed_passages

    def comparable(self, blob: bytes | None, model: str | None) -> bool:
        return blob is not None and len(blob) == 4 * self.dim and model_space(model) == self.space

    def vectors(self, rows: Sequence[tuple[str, bytes | None, str | None]]) -> list[array]:
        """Each (text, blob, model) row's vector in this space: its own when
        comparable, else its text embedded now (one batch)."""
        foreign = [i for i, (_, blob, model) in enumerate(rows) if not self.comparable(blob, model)]
        fresh = self.embed_passages([rows[i][0] for i in foreign]) if foreign else []
        out = [vector(blob) if blob is not None and i not in foreign else array("f") for i, (_, blob, _m)
               in enumerate(rows)]
        for i, blob in zip(foreign, fresh):
            out[i] = vector(blob)
        return out

    def score(self, kind: str, raw: float) -> float:
        return float(self.calibration.score(kind, raw)) if self.calibration is not None else raw


def ranked(space: Space, query: array, rows: Sequence[tuple[str, bytes | None, str | None]], kind: str,
           threshold: float) -> list[tuple[int, float]]:
    """(row index, calibrated score) of the rows at or above `threshold`, best first."""
    scored = []
    for i, candidate in enumerate(space.vectors(rows)):
        if len(candidate) != len(query):
            continue
        score = space.score(kind, cosine(query, candidate))
        if score >= threshold:
            scored.append((i, round(score, 3)))
    scored.sort(key=lambda pair: -pair[1])
    return scored


def nearest(space: Space, query: array, rows: Sequence[tuple[str, bytes | None, str | None]]) -> int | None:
    """The row the same as `query` (a passage), if any reaches SAME_THRESHOLD."""
    found = ranked(space, query, rows, "passage", SAME_THRESHOLD)
    return found[0][0] if found else None
