"""Which memories relate to a prompt, for the recall nudge of the agent hook `flush-tools`.

A peek (ops.recall.peek: ranked as recall ranks, with no recall stamps, since the
agent has not read anything yet) over the project store plus global, then a
cut-off that means the same thing whatever else is in the store:

- with the model (the warm daemon): the cosine between the prompt and the
  memory on the calibrated scale (calibration/: the same for every model),
  at or above the setting nudge.threshold (0.45; bench/calibration.py
  measures it with three models on LoCoMo and developer notes). The hybrid
  score also counts shared words, which a prompt has with many memories;
- without it (daemon cold or off): the share of the prompt's term weight
  a memory matches (bm25 divided by the prompt's summed idf), at or above
  LEXICAL_THRESHOLD.

recall's own relevance floor is not applied here: these cut-offs decide.
"""

from __future__ import annotations

from ..memory.records import Memory
from ..support.settings import NUDGE_THRESHOLD as DEFAULT_THRESHOLD
from .context import Context
from .recall import peek

LEXICAL_THRESHOLD = 0.5
MIN_PROMPT_CHARS = 10
MAX_MATCHES = 5
CANDIDATES = 10


class Match:
    __slots__ = ("memory", "score", "by", "doubts")

    def __init__(self, memory: Memory, score: float, by: str) -> None:
        self.memory, self.score, self.by = memory, score, by  # by: "cosine" or "keywords"
        self.doubts: list[str] = []  # one line per anchor whose code changed or is gone (ops/anchors.py)

    def __repr__(self) -> str:
        return f"Match({self.memory.label!r}, {self.score:.3f}, {self.by})"


def threshold(env) -> float:
    """The nudge.threshold setting (THATCH_RECALL_THRESHOLD); the default
    when it is not a number in (0, 1]: a hook never fails on a setting."""
    from ..support.settings import value

    return value(env, "nudge.threshold", strict=False)


def related(ctx: Context, prompt: str, *, cosine: float = DEFAULT_THRESHOLD, lexical: float = LEXICAL_THRESHOLD,
            semantic: bool = True) -> list[Match]:
    """The memories (best first, at most MAX_MATCHES) that relate to `prompt`
    in the detected store and global; none for a prompt under
    MIN_PROMPT_CHARS. `semantic` False ranks by keywords only (no model)."""
    if len(prompt.strip()) < MIN_PROMPT_CHARS:
        return []
    outcome = peek(ctx, prompt, limit=CANDIDATES, mode="hybrid" if semantic else "lexical", floor=0)
    if outcome.mode != "lexical":
        found = [Match(r.memory, r.ranked.semantic, "cosine") for r in outcome.results
                 if r.ranked.semantic is not None and r.ranked.semantic >= cosine]
    else:
        # A keyword score is LEXICAL_WEIGHT x the share of the prompt's term weight matched (ranking/fusion.py).
        from ..ranking.fusion import LEXICAL_WEIGHT

        shares = [(r.memory, r.score / LEXICAL_WEIGHT) for r in outcome.results if r.ranked.lexical is not None]
        found = [Match(memory, share, "keywords") for memory, share in shares if share >= lexical]
    found.sort(key=lambda m: (-m.score, m.memory.store, m.memory.slug))
    found = found[:MAX_MATCHES]
    if found:
        from .anchors import of

        anchored = of(ctx, [m.memory.key for m in found])
        for m in found:
            m.doubts = anchored.doubts(m.memory.key)
    return found

