"""How well the credential check catches secrets and leaves notes alone.

    python bench/credentials.py [--json] [--show]

Runs the scanner `thatch sync` and `remember` use (gitleaks' rules and
thatch's, thatch_cli/support/secrets.py) over two corpora written for it:
bench/data/secrets_corpus.json (credentials as people and agents write
them: provider token formats in prose, prose passwords, and the same
tokens split over two lines, with a zero-width space or soft hyphen inside,
spaced out, hex- and base64-encoded; the tokens are random, none is real)
and bench/data/developer_notes.json (ordinary notes full of commit hashes,
UUIDs, digests, fingerprints, version strings and the words password,
token and secret). Prints the catch rate, the false-positive rate and the
scan time per note; `--show` lists the misses and false positives with
each secret cut to four characters.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from thatch_cli.support import secrets  # noqa: E402

DATA = ROOT / "bench" / "data"


def measure(scanner: secrets.Scanner, texts: list[str]) -> tuple[list[bool], float]:
    """Whether each text is flagged, and the mean scan time in milliseconds."""
    start = time.perf_counter()
    flagged = [bool(scanner.scan(text)) for text in texts]
    return flagged, (time.perf_counter() - start) * 1000 / max(1, len(texts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--show", action="store_true", help="list misses and false positives")
    args = parser.parse_args(argv)
    positives = json.loads((DATA / "secrets_corpus.json").read_text(encoding="utf-8"))
    negatives = json.loads((DATA / "developer_notes.json").read_text(encoding="utf-8"))
    started = time.perf_counter()
    scanner = secrets.load()
    load_ms = (time.perf_counter() - started) * 1000
    caught, pos_ms = measure(scanner, positives)
    flagged, neg_ms = measure(scanner, negatives)
    report = {"secrets": len(positives), "caught": sum(caught), "catch_rate": sum(caught) / len(positives),
              "notes": len(negatives), "false_positives": sum(flagged),
              "false_positive_rate": sum(flagged) / len(negatives), "rules": len(scanner.rules),
              "load_ms": round(load_ms, 1), "scan_ms_per_text": round((pos_ms + neg_ms) / 2, 3)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("| corpus | texts | flagged | rate |\n|---|---:|---:|---:|")
        print(f"| secrets (catch) | {report['secrets']} | {report['caught']} | {report['catch_rate']:.1%} |")
        print(f"| developer notes (false positives) | {report['notes']} | {report['false_positives']} |"
              f" {report['false_positive_rate']:.1%} |")
        print(f"\n{report['rules']} rules, loaded in {report['load_ms']} ms; {report['scan_ms_per_text']} ms per text.")
    if args.show:
        for text, hit in zip(positives, caught):
            if not hit:
                print("missed:", " ".join(text.split())[:60])
        for text, hit in zip(negatives, flagged):
            if hit:
                found = ", ".join(f"{f.rule} {f.redacted}" for f in scanner.scan(text))
                print("false positive:", found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
