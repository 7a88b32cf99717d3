"""What the recall nudge's cut-off (the agent hook flush-tools) means: `python bench/recall_threshold.py [DATA_DIR] [--model M]`.

The recall nudge (`thatch flush-tools`) lists memories that relate to the
user's prompt. This measures, on LoCoMo (the data bench/locomo.py uses: one
memory per turn, one store per conversation), three candidate cut-offs over
the top 10 of the telemetry-free hybrid search:

  * the semantic score: the cosine on the calibrated scale (what
    nudge.threshold applies to; the same for every model);
  * the hybrid score recall shows (0-1, the same scale as recall.floor),
    for comparison;
  * the lexical share (bm25 / the query's summed idf), used when the model
    is not warm.

For each cut-off: how often the nudge fires for a question about the
conversation ("related"; its evidence turns are in the store), what share
of the memories it lists are evidence turns (precision), and how often it
fires for a question from another conversation asked against this store
("unrelated": other people, other events). The model is --model (one of
bench/models.py's names, a folder, or fake:DIM), else THATCH_MODEL, else
the bundled all-MiniLM-L6-v2. bench/calibration.py measures the nudge
itself with several models.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import locomo  # noqa: E402
import models  # noqa: E402

from thatch_cli.model.embeddings import model_space  # noqa: E402
from thatch_cli.ops import nudge  # noqa: E402
from thatch_cli.ops.context import Context  # noqa: E402
from thatch_cli.ops.recall import peek  # noqa: E402
from thatch_cli.ranking.fusion import LEXICAL_WEIGHT  # noqa: E402

SEMANTIC = (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)
FUSED = (0.5, 0.6, 0.7, 0.8, 0.9)
SHARES = (0.3, 0.4, 0.5, 0.6, 0.7)
PER_STORE = 60  # questions asked per conversation, each way
COLUMN = {"semantic": 1, "fused": 2, "lexical share": 3}


def scored(ctx: Context, store: str, question: str) -> list[tuple[str, float | None, float, float | None]]:
    """(slug, calibrated semantic score, hybrid score, lexical share) of the top 10, with no floor."""
    hybrid = peek(ctx, question, store=store, limit=nudge.CANDIDATES, mode="hybrid", floor=0)
    keywords = peek(ctx, question, store=store, limit=nudge.CANDIDATES, mode="lexical", floor=0)
    rows = [(r.memory.slug, r.ranked.semantic, r.score, None) for r in hybrid.results]
    rows += [(r.memory.slug, None, 0.0, r.score / LEXICAL_WEIGHT) for r in keywords.results]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(locomo.DEFAULT_DATA), metavar="DATA_DIR")
    parser.add_argument("--model", default=os.environ.get("THATCH_MODEL"))
    parser.add_argument("--questions", type=int, default=PER_STORE, metavar="N",
                        help="questions per conversation, each way")
    args = parser.parse_args()
    if locomo.missing_data(Path(args.data)):
        return 2
    embedder = models.embedder(locomo.model_path(args.model))
    samples = locomo.conversations(Path(args.data))
    asked = {}
    for name, sample in samples:
        ids = {dia_id for dia_id, _ in locomo.turns(sample)}
        asked[name] = locomo.questions(sample, ids)[:args.questions]
    criteria = ([("semantic", t) for t in SEMANTIC] + [("fused", t) for t in FUSED]
                + [("lexical share", t) for t in SHARES])
    fired = {c: {"related": [], "unrelated": [], "precision": []} for c in criteria}
    for index, (name, sample) in enumerate(samples):
        other = samples[(index + 1) % len(samples)][0]
        with tempfile.TemporaryDirectory() as tmp:
            ctx = Context(env={"THATCH_DB": f"{tmp}/t.db", "THATCH_DAEMON": "0", "HOME": tmp}, cwd=Path(tmp),
                          embedder_factory=lambda env: embedder)
            store = f"locomo/{name}"
            slug_to_dia = locomo.load(ctx, embedder, store, locomo.turns(sample))
            for kind, questions in (("related", asked[name]), ("unrelated", asked[other])):
                for question, evidence in questions:
                    rows = scored(ctx, store, question)
                    for criterion, cut in criteria:
                        column = COLUMN[criterion]
                        listed = [row[0] for row in rows if row[column] is not None and row[column] >= cut][:5]
                        fired[(criterion, cut)][kind].append(bool(listed))
                        if kind == "related" and listed:
                            hits = sum(slug_to_dia[slug] in evidence for slug in listed)
                            fired[(criterion, cut)]["precision"].append(hits / len(listed))
            ctx.close()
    total = {kind: len(fired[criteria[0]][kind]) for kind in ("related", "unrelated")}
    print(f"LoCoMo, {len(samples)} conversations, {total['related']} related and {total['unrelated']} unrelated"
          f" questions; model {model_space(embedder.name)}; top 10 of the hybrid search, at most 5 listed\n")
    print("| cut-off | fires on related | precision of what it lists | fires on unrelated |")
    print("|---|---:|---:|---:|")
    for criterion, cut in criteria:
        row = fired[(criterion, cut)]
        def mean(values):
            return statistics.fmean(values) if values else 0.0

        print(f"| {criterion} >= {cut} | {mean(row['related']):.2f} | {mean(row['precision']):.2f} |"
              f" {mean(row['unrelated']):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
