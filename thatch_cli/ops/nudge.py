"""Which memories relate to a prompt, for the recall nudge of the agent hook `flush-tools`.

A peek (ops.recall.peek: ranked as recall ranks, with no recall stamps, since the
agent has not read anything yet) over the project store plus global, then a
cut-off that means the same thing whatever else is in the store:

- with the model (the warm daemon), one rule on both kinds of evidence:

      evidence = meaning + WORDS_WEIGHT x max(0, words - WORDS_FROM) >= nudge.threshold

  where meaning is the cosine between the prompt and the memory on the
  calibrated scale (calibration/: the same for every model) and words the
  share of the prompt's term weight the memory matches (bm25 over the
  prompt's summed idf, ranking/fusion.term_share: a rare word weighs more
  than a common one). Up to WORDS_FROM, shared words are what a prompt has
  with many memories and add nothing; past it, a prompt that names the
  memory's subject ("release process", "graphql schema") adds up to 0.3.
  The threshold setting (0.45) keeps its meaning for a prompt that shares
  no word. bench/nudge_rule.py chose the two constants on half of
  bench/data/nudge_prompts.json and checks them on the other half and on
  bench/data/nudge_fresh.json (written before, only checked on), with
  three models; bench/calibration.py measures the threshold on LoCoMo.
  Each prompt is embedded once: asking a prompt's clauses too was measured
  and not kept (docs/benchmarks.md: 3 of 248 related prompts gained, for
  twice the daemon's work on every multi-clause prompt that lists nothing),
  and so was matching the prompt's words to the memory's by the model's
  meaning, word against word ("prod" ~ "production"; bench/nudge_rule.py
  --soft-words: it did what a lower threshold does, a few more tasks for
  more unrelated prompts, and embedding the words costs more than the
  prompt itself);
- without it (daemon cold or off): the words alone, at or above
  LEXICAL_THRESHOLD.

recall's own relevance floor is not applied here: these cut-offs decide.
"""

from __future__ import annotations

from ..memory.records import Memory
from ..support.settings import NUDGE_THRESHOLD as DEFAULT_THRESHOLD
from .context import Context
from .recall import peek

LEXICAL_THRESHOLD = 0.5
# The rule with the model (see above): shared words count past WORDS_FROM of
# the prompt's term weight, WORDS_WEIGHT per unit of share.
WORDS_FROM = 0.4
WORDS_WEIGHT = 0.5
RULE = f"meaning + {WORDS_WEIGHT} x max(0, words - {WORDS_FROM})"
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


def related(ctx: Context, prompt: str, *, threshold: float = DEFAULT_THRESHOLD, lexical: float = LEXICAL_THRESHOLD,
            semantic: bool = True) -> list[Match]:
    """The memories (best first, at most MAX_MATCHES) that relate to `prompt`
    in the detected store and global; none for a prompt under
    MIN_PROMPT_CHARS. `semantic` False ranks by keywords only (no model)."""
    if len(prompt.strip()) < MIN_PROMPT_CHARS:
        return []
    outcome = peek(ctx, prompt, limit=CANDIDATES, mode="hybrid" if semantic else "lexical", floor=0)
    if outcome.mode != "lexical":
        scored = [(r.memory, evidence(r.ranked.semantic, r.ranked.share)) for r in outcome.results
                  if r.ranked.semantic is not None]
        found = [Match(memory, score, "evidence") for memory, score in scored if score >= threshold]
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

