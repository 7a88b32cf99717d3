"""Which memories relate to a prompt, for the recall nudge of the agent hook `flush-tools`.

A peek (ops.recall.peek: ranked as recall ranks, with no recall stamps, since the
agent has not read anything yet) over the project store plus global, then a
cut-off that means the same thing whatever else is in the store:

- with the model (the warm daemon), one rule on both kinds of evidence:

      evidence = meaning + WORDS_WEIGHT x max(0, words - WORDS_FROM) >= nudge.threshold

  where meaning is the cosine between the prompt and the memory on the
  calibrated scale (calibration/: the same for every model), the best of the
  whole prompt's and each of its clauses', and words the share of the
  prompt's term weight the memory matches (bm25 over the prompt's summed
  idf, ranking/fusion.term_share: a rare word weighs more than a common one,
  and the index stems, so "deploys" matches "deploy").

  Clauses: a task often wraps what it is about in circumstances ("the
  changelog is updated and main is green; walk me through the release"),
  which pull the whole prompt's vector away from the memory. A prompt that
  splits (at , ; : ! ? a sentence end, or a joining word such as "and",
  "but", "so", "because") into at least two parts of CLAUSE_CHARS or more
  has its first MAX_CLAUSES parts embedded too, each ranked alone, when
  the whole prompt lists nothing; a memory's meaning is its best cosine.

  Words: up to WORDS_FROM, shared words are what a prompt has with many
  memories and add nothing; past it, a prompt that names the memory's
  subject ("release process", "graphql schema") adds up to 0.3. The
  threshold setting (0.45) keeps its meaning for a one-clause prompt that
  shares no word. bench/nudge_rule.py measures the
  rule with three models on two sets of developer prompts (one written
  before the rule was chosen, and only checked on); bench/calibration.py
  measures the threshold on LoCoMo;
- without it (daemon cold or off): the words alone, at or above
  LEXICAL_THRESHOLD.

recall's own relevance floor is not applied here: these cut-offs decide.
"""

from __future__ import annotations

import re

from ..memory.records import Memory
from ..support.settings import NUDGE_THRESHOLD as DEFAULT_THRESHOLD
from .context import Context
from .recall import peek

LEXICAL_THRESHOLD = 0.5
# The rule with the model (see above): shared words count past WORDS_FROM of
# the prompt's term weight, WORDS_WEIGHT per unit of share.
WORDS_FROM = 0.4
WORDS_WEIGHT = 0.5
RULE = f"meaning (best of the prompt and its clauses) + {WORDS_WEIGHT} x max(0, words - {WORDS_FROM})"
# Where a prompt splits into clauses, the shortest part that counts as one,
# and how many parts are embedded at most (each costs the daemon one embedding).
_CLAUSE_BREAK = re.compile(r"\s*(?:[,;:!?]|\.\s|\s(?:and|but|so|because|then|or|while|after|before|since)\s)\s*",
                           re.IGNORECASE)
CLAUSE_CHARS = 12
MAX_CLAUSES = 3
MIN_PROMPT_CHARS = 10
MAX_MATCHES = 5
CANDIDATES = 10


class Match:
    __slots__ = ("memory", "score", "by", "doubts")

    def __init__(self, memory: Memory, score: float, by: str) -> None:
        self.memory, self.score, self.by = memory, score, by  # by: "evidence" or "keywords"
        self.doubts: list[str] = []  # one line per anchor whose code changed or is gone (ops/anchors.py)

    def __repr__(self) -> str:
        return f"Match({self.memory.label!r}, {self.score:.3f}, {self.by})"


def threshold(env) -> float:
    """The nudge.threshold setting (THATCH_RECALL_THRESHOLD); the default
    when it is not a number in (0, 1]: a hook never fails on a setting."""
    from ..support.settings import value

    return value(env, "nudge.threshold", strict=False)


def evidence(meaning: float, words: float) -> float:
    """The nudge's score with the model: the calibrated cosine, raised by the
    share of the prompt's term weight matched beyond WORDS_FROM."""
    return meaning + WORDS_WEIGHT * max(0.0, words - WORDS_FROM)


def clauses(prompt: str) -> list[str]:
    """The prompt's clauses (see above), none when it has fewer than two."""
    parts = [part for part in _CLAUSE_BREAK.split(prompt.strip()) if len(part) >= CLAUSE_CHARS]
    return parts[:MAX_CLAUSES] if len(parts) > 1 else []


def related(ctx: Context, prompt: str, *, threshold: float = DEFAULT_THRESHOLD, lexical: float = LEXICAL_THRESHOLD,
            semantic: bool = True) -> list[Match]:
    """The memories (best first, at most MAX_MATCHES) that relate to `prompt`
    in the detected store and global; none for a prompt under
    MIN_PROMPT_CHARS. `semantic` False ranks by keywords only (no model)."""
    if len(prompt.strip()) < MIN_PROMPT_CHARS:
        return []
    outcome = peek(ctx, prompt, limit=CANDIDATES, mode="hybrid" if semantic else "lexical", floor=0)
    if outcome.mode != "lexical":
        memories: dict[tuple[str, str], Memory] = {}
        meaning: dict[tuple[str, str], float] = {}
        for r in outcome.results:
            if r.ranked.semantic is not None:
                memories[r.memory.key], meaning[r.memory.key] = r.memory, r.ranked.semantic
        words = {r.memory.key: r.ranked.share for r in outcome.results}
        # The clauses cost the daemon a search each, so they are asked only
        # when the whole prompt lists nothing (on the bench data the lists
        # are then the same as asking them always).
        reached = any(evidence(meaning[key], words.get(key, 0.0)) >= threshold for key in meaning)
        for part in [] if reached else clauses(prompt):
            clause = peek(ctx, part, limit=CANDIDATES, mode="semantic", floor=0)
            if clause.mode != "semantic":  # the model went away meanwhile: the whole prompt's evidence stands
                break
            for r in clause.results:
                memories.setdefault(r.memory.key, r.memory)
                meaning[r.memory.key] = max(meaning.get(r.memory.key, 0.0), r.ranked.semantic or 0.0)
        found = [Match(memories[key], score, "evidence") for key, score in
                 ((key, evidence(meaning[key], words.get(key, 0.0))) for key in memories) if score >= threshold]
    else:
        found = [Match(r.memory, r.ranked.share, "keywords") for r in outcome.results
                 if r.ranked.lexical is not None and r.ranked.share >= lexical]
    found.sort(key=lambda m: (-m.score, m.memory.store, m.memory.slug))
    found = found[:MAX_MATCHES]
    if found:
        from .anchors import of

        anchored = of(ctx, [m.memory.key for m in found])
        for m in found:
            m.doubts = anchored.doubts(m.memory.key)
    return found

