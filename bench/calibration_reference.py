"""Write (or check) the calibration reference: `python bench/calibration_reference.py [--check] [--model PATH]`.

thatch_cli/calibration/reference.json holds the reference model's
quantiles on the calibration sample (thatch_cli/calibration/sample.json):
the scale every model's cosines are mapped onto. The reference model is
all-MiniLM-L6-v2 (the bundled one, or --model). Rerun after changing the
sample; --check only says whether the file matches what the model gives
now (exit 1 when it does not).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import models  # noqa: E402

from thatch_cli.calibration import HERE  # noqa: E402
from thatch_cli.calibration.fit import reference_document  # noqa: E402

TOLERANCE = 1e-4


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the stored file instead of writing it")
    parser.add_argument("--model", default="minilm",
                        help="the reference model (default: the bundled all-MiniLM-L6-v2; fake:DIM for a smoke run)")
    parser.add_argument("--output", type=Path, default=HERE / "reference.json", help=argparse.SUPPRESS)
    args = parser.parse_args()
    document = reference_document(models.embedder(args.model))
    target = args.output
    if args.check:
        stored = json.loads(target.read_text(encoding="utf-8"))
        worst = max(abs(a - b) for kind in ("query", "passage") for a, b in zip(stored[kind], document[kind]))
        same = stored["sample"] == document["sample"] and worst <= TOLERANCE
        print(f"reference.json {'matches' if same else 'differs from'} {document['identity']}"
              f" (sample {stored['sample']} vs {document['sample']}, largest difference {worst:.2e})")
        return 0 if same else 1
    target.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {target} from {document['identity']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
