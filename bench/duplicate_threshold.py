"""How well the near-duplicate cut-off separates duplicates from look-alikes.

    python bench/duplicate_threshold.py [--models minilm,compressed,mpnet]

Scores the labelled pairs of tests/data/duplicate_pairs.json (exact repeats,
rewordings, same-template-different-fact pairs, related notes) with each
model (bench/models.py's names, a model folder, or fake:DIM; default
THATCH_MODEL, else the bundled all-MiniLM-L6-v2), each text embedded exactly
as `thatch remember CONTENT` embeds it, the cosine put on the calibrated
scale as the warning compares it (the model's "passage" calibration), and
prints precision, recall, F1, F0.5 and false warnings of the warning at a
sweep of cut-offs as a Markdown table per model.
tests/ops/test_duplicate_threshold.py holds the data handling and asserts
the floors at the chosen constant.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "ops"), str(ROOT / "bench")]

import models  # noqa: E402
from test_duplicate_threshold import PAIRS, SWEEP, pair_scores, quality  # noqa: E402

from thatch_cli.calibration.fit import of as calibration_of  # noqa: E402
from thatch_cli.model.embeddings import model_space  # noqa: E402
from thatch_cli.support.settings import DUPLICATE_THRESHOLD  # noqa: E402


def calibrated_scores(embedder):
    import numpy as np

    calibration = calibration_of(embedder)
    return np.array([calibration.score("passage", float(c)) for c in pair_scores(embedder)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=os.environ.get("THATCH_MODEL") or "minilm",
                        help="comma-separated: minilm, compressed, mpnet, a model folder, or fake:DIM")
    args = parser.parse_args()
    kinds = sorted({p["kind"] for p in PAIRS})
    counts = ", ".join(f"{sum(p['kind'] == k for p in PAIRS)} {k}" for k in kinds)
    for spec in args.models.split(","):
        embedder = models.embedder(spec)
        scores = calibrated_scores(embedder)
        print(f"{len(PAIRS)} labelled pairs ({counts}); model {model_space(embedder.name)}; calibrated scale\n")
        print("| cut-off | precision | recall | F1 | F0.5 | warnings | false warnings |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for threshold in sorted({*SWEEP.tolist(), DUPLICATE_THRESHOLD}):
            precision, recall, warned, false = quality(scores, threshold)
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            f05 = 1.25 * precision * recall / (0.25 * precision + recall) if precision + recall else 0.0
            mark = " (default)" if threshold == DUPLICATE_THRESHOLD else ""
            print(f"| {threshold:.3f}{mark} | {precision:.3f} | {recall:.3f} | {f1:.3f} | {f05:.3f} | {warned} |"
                  f" {false} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
