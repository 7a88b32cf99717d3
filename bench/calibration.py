"""Relevance decisions with several models, before and after calibration.

    python bench/calibration.py [--models minilm,compressed,mpnet] [--locomo DATA_DIR] [--json]
                                [--questions N]

For each model (bench/models.py builds or fetches them) and each way of
scoring, this asks through thatch's own operations:

- the prompt nudge (ops/nudge.related, what `thatch flush-tools` lists):
  how often it fires for a related prompt and for an unrelated one. LoCoMo
  (the protocol of bench/recall_threshold.py: per conversation, its first
  N questions against its store, and the next conversation's first N
  against it) and developer notes (bench/data/developer_questions.json:
  related prompts and off-topic questions against the notes of
  tests/data/duplicate_pairs.json);
- the relevance floor (ops/recall.peek with the default floor): the
  share of off-topic questions answered with nothing (the developer notes'
  off-topic questions, and tests/data/recall_queries.json's locomo_off
  against each LoCoMo conversation);
- ranking: LoCoMo Recall@5 and NDCG@10 of hybrid recall at the default
  floor, and how much the floor costs (the same without a floor).

"before" is what thatch did until calibration: raw cosines against the
cut-offs taken from the original thatch (nudge 0.55, floor 0.3). "after"
is the calibrated scale (thatch_cli/calibration/) with the current
defaults. The last column says whether the targets hold: nudge on >= 70%
of related and <= 5% of unrelated prompts, the floor emptying >= 85% of
off-topic questions, Recall@5 losing <= 0.01 to the floor, and every rate
within 5 points of all-MiniLM-L6-v2's. The last table gives each model's
default cut-offs as raw cosines, and how long measuring the model takes
(what its first use on a machine adds, the model already loaded).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import locomo  # noqa: E402
import models  # noqa: E402
from relevance_floor import developer_notes  # noqa: E402

from thatch_cli.calibration import IDENTITY_CURVE, KINDS, Calibration, sample_version  # noqa: E402
from thatch_cli.calibration.fit import of as calibration_of  # noqa: E402
from thatch_cli.ops import nudge  # noqa: E402
from thatch_cli.ops.context import Context  # noqa: E402
from thatch_cli.ops.recall import peek  # noqa: E402
from thatch_cli.support.settings import DUPLICATE_THRESHOLD, NUDGE_THRESHOLD, RECALL_FLOOR  # noqa: E402
from thatch_cli.support.slugs import slugify  # noqa: E402

DATA = ROOT / "bench" / "data" / "developer_questions.json"
QUERIES = ROOT / "tests" / "data" / "recall_queries.json"
# The cut-offs of each way of scoring: before calibration, the original's raw-cosine values.
CUTS = {"before": {"nudge": 0.55, "floor": 0.3}, "after": {"nudge": NUDGE_THRESHOLD, "floor": RECALL_FLOOR}}
BEFORE = CUTS["before"]
SWEEP = (0.3, 0.35, 0.4, 0.42, 0.44, 0.45, 0.46, 0.48, 0.5, 0.55)
PER_STORE = 60
CUTOFFS = (("recall.floor", "query", RECALL_FLOOR), ("nudge.threshold", "query", NUDGE_THRESHOLD),
           ("duplicates.threshold", "passage", DUPLICATE_THRESHOLD))
TARGETS = {"nudge_related": 0.70, "nudge_unrelated": 0.05, "floor_empty": 0.85, "recall_drop": 0.01, "spread": 0.05}


class Scored:
    """An embedder seen through one way of scoring: its own calibration
    ("after") or raw cosines ("before"). Query vectors are remembered
    (`memo`, shared by both ways), since every question is asked several times."""

    def __init__(self, embedder, calibrated: bool, memo: dict) -> None:
        self.inner, self.calibrated, self._queries = embedder, calibrated, memo
        self._calibration = None

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_query(self, text: str):
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]

    def embed_passages(self, texts):
        return self.inner.embed_passages(texts)

    def calibration(self) -> Calibration:
        if self._calibration is None:
            if self.calibrated:
                self._calibration = calibration_of(self.inner)
            else:
                self._calibration = Calibration(self.name, dict.fromkeys(KINDS, IDENTITY_CURVE),
                                                sample=sample_version())
        return self._calibration


def context(tmp: str, embedder, store: str) -> Context:
    env = {"THATCH_DB": f"{tmp}/bench.db", "THATCH_DAEMON": "0", "HOME": tmp, "THATCH_STORE": store,
           "XDG_CONFIG_HOME": f"{tmp}/config"}
    return Context(env=env, cwd=Path(tmp), embedder_factory=lambda _env: embedder)


def nudge_best(ctx: Context, prompt: str) -> float:
    """The best score a memory the nudge would list has (ops/nudge.related
    with no cut-off): the nudge fires at cut-off t when this reaches t."""
    found = nudge.related(ctx, prompt, threshold=-1.0)
    return max((m.score for m in found), default=-1.0)


def floor_best(ctx: Context, query: str) -> float:
    """The best score of recall's top 10 (ops/recall.peek without a floor):
    a floor f answers nothing when this is below f."""
    return max((r.score for r in peek(ctx, query, limit=10, floor=0).results), default=-1.0)


def developer_runs(embedder, variants: dict, questions: dict) -> dict:
    """variant -> best scores over the developer notes."""
    notes = developer_notes()
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for number, (name, scored) in enumerate(variants.items()):
            ctx = context(tmp, scored, "dev")
            if number == 0:
                locomo.load(ctx, embedder, "dev", notes)
            hits = []
            for q, labels in questions["related"]:
                top = [r.memory.slug for r in peek(ctx, q, limit=5, floor=0).results]
                hits.append(bool(set(top) & {slugify(label) for label in labels}))
            found[name] = {"nudge_related": [nudge_best(ctx, q) for q, _ in questions["related"]],
                           "nudge_unrelated": [nudge_best(ctx, q) for q in questions["off_topic"]],
                           "floor_off_topic": [floor_best(ctx, q) for q in questions["off_topic"]],
                           "hit_at_5": hits}
            ctx.close()
    return found


def locomo_runs(embedder, variants: dict, folder: Path, per_store: int, off_topic: list[str]) -> dict:
    """variant -> best scores and rankings over LoCoMo."""
    samples = locomo.conversations(folder)
    asked = {}
    for name, sample in samples:
        asked[name] = locomo.questions(sample, {dia_id for dia_id, _ in locomo.turns(sample)})
    found = {name: {"nudge_related": [], "nudge_unrelated": [], "floor_off_topic": [], "ranked": []}
             for name in variants}
    for index, (conversation, sample) in enumerate(samples):
        other = samples[(index + 1) % len(samples)][0]
        store = f"locomo/{conversation}"
        log(f"{embedder.name}: LoCoMo {conversation}")
        with tempfile.TemporaryDirectory() as tmp:
            for number, (name, scored) in enumerate(variants.items()):
                ctx = context(tmp, scored, store)
                if number == 0:
                    to_dia = locomo.load(ctx, embedder, store, locomo.turns(sample))
                row = found[name]
                for question, evidence in asked[conversation]:
                    outcome = peek(ctx, question, limit=10, floor=0)
                    row["ranked"].append(([(to_dia[r.memory.slug], r.score) for r in outcome.results], evidence))
                row["nudge_related"] += [nudge_best(ctx, q) for q, _ in asked[conversation][:per_store]]
                row["nudge_unrelated"] += [nudge_best(ctx, q) for q, _ in asked[other][:per_store]]
                row["floor_off_topic"] += [floor_best(ctx, q) for q in off_topic]
                ctx.close()
    return found


def measuring_time(embedder) -> float:
    """Seconds a first use of the model spends measuring it (calibration/fit.py),
    the model already loaded; the cache is left alone."""
    from thatch_cli.calibration.fit import fit

    embedder.embed_passages(["load the model first"])
    started = time.perf_counter()
    fit(embedder)
    return round(time.perf_counter() - started, 1)


def log(text: str) -> None:
    print(f"[calibration] {text}", file=sys.stderr, flush=True)


def rate(values: list[float], cut: float) -> float:
    return statistics.fmean(v >= cut for v in values) if values else 0.0


def summary(dev: dict, loco: dict, cut: dict) -> dict:
    floor = cut["floor"]
    floored = locomo.metrics([([d for d, score in ranked if score >= floor], ev) for ranked, ev in loco["ranked"]])
    unfloored = locomo.metrics([([d for d, _ in ranked], ev) for ranked, ev in loco["ranked"]])
    return {
        "locomo_nudge_related": rate(loco["nudge_related"], cut["nudge"]),
        "locomo_nudge_unrelated": rate(loco["nudge_unrelated"], cut["nudge"]),
        "dev_nudge_related": rate(dev["nudge_related"], cut["nudge"]),
        "dev_nudge_unrelated": rate(dev["nudge_unrelated"], cut["nudge"]),
        "dev_floor_empty": 1.0 - rate(dev["floor_off_topic"], floor),
        "locomo_floor_empty": 1.0 - rate(loco["floor_off_topic"], floor),
        "dev_hit_at_5": statistics.fmean(dev["hit_at_5"]) if dev["hit_at_5"] else 0.0,
        "Recall@5": floored["Recall@5"],
        "NDCG@10": floored["NDCG@10"],
        "recall_drop": unfloored["Recall@5"] - floored["Recall@5"],
    }


def sweep(dev: dict, loco: dict) -> list[dict]:
    """The nudge's rates at each cut-off of SWEEP, and the floor's."""
    return [{"cut": cut, "nudge": [rate(loco["nudge_related"], cut), rate(loco["nudge_unrelated"], cut),
                                   rate(dev["nudge_related"], cut), rate(dev["nudge_unrelated"], cut)],
             "floor_empty": [1.0 - rate(dev["floor_off_topic"], cut), 1.0 - rate(loco["floor_off_topic"], cut)]}
            for cut in SWEEP]


def meets(row: dict, reference: dict | None) -> list[str]:
    """The targets a row misses."""
    missed = []
    for key in ("locomo_nudge_related", "dev_nudge_related"):
        if row[key] < TARGETS["nudge_related"]:
            missed.append(key)
    for key in ("locomo_nudge_unrelated", "dev_nudge_unrelated"):
        if row[key] > TARGETS["nudge_unrelated"]:
            missed.append(key)
    for key in ("dev_floor_empty", "locomo_floor_empty"):
        if row[key] < TARGETS["floor_empty"]:
            missed.append(key)
    if row["recall_drop"] > TARGETS["recall_drop"]:
        missed.append("recall_drop")
    if reference is not None:
        rates = [k for k in row if "nudge" in k or "floor" in k]
        missed += [f"{k} vs MiniLM" for k in rates if abs(row[k] - reference[k]) > TARGETS["spread"]]
    return missed


COLUMNS = (("locomo_nudge_related", "nudge, LoCoMo related"), ("locomo_nudge_unrelated", "nudge, LoCoMo unrelated"),
           ("dev_nudge_related", "nudge, dev related"), ("dev_nudge_unrelated", "nudge, dev off-topic"),
           ("dev_floor_empty", "floor empties, dev off-topic"),
           ("locomo_floor_empty", "floor empties, LoCoMo off-topic"), ("Recall@5", "LoCoMo Recall@5"),
           ("NDCG@10", "LoCoMo NDCG@10"), ("recall_drop", "Recall@5 lost to the floor"))


def table(report: dict) -> str:
    lines = [f"{report['questions']}; cut-offs before: nudge {BEFORE['nudge']}, floor {BEFORE['floor']} (raw cosine);"
             f" after: nudge {NUDGE_THRESHOLD}, floor {RECALL_FLOOR} (calibrated scale)", "",
             "| model | scores | " + " | ".join(title for _, title in COLUMNS) + " | targets |",
             "|---|---|" + "---:|" * len(COLUMNS) + "---|"]
    for row in report["rows"]:
        cells = [f"{row[key]:.0%}" if "nudge" in key or "floor" in key else f"{row[key]:.3f}" for key, _ in COLUMNS]
        verdict = "met" if not row["missed"] else "missed: " + ", ".join(row["missed"])
        lines.append(f"| {row['model']} | {row['variant']} | " + " | ".join(cells) + f" | {verdict} |")
    lines += ["", "After calibration, by cut-off (nudge fires on: LoCoMo related / unrelated, developer related /"
              " off-topic; floor empties: developer / LoCoMo off-topic):", "",
              "| model | cut-off | nudge | floor empties |", "|---|---:|---|---|"]
    for model, found in report["sweeps"].items():
        for row in found:
            nudge_cells = " / ".join(f"{v:.0%}" for v in row["nudge"])
            floor_cells = " / ".join(f"{v:.0%}" for v in row["floor_empty"])
            lines.append(f"| {model} | {row['cut']:.2f} | {nudge_cells} | {floor_cells} |")
    lines += ["", "The default cut-offs as each model's raw cosine (its calibration):", "",
              "| model | " + " | ".join(f"{key} {value}" for key, _, value in CUTOFFS) + " | measuring it once |",
              "|---|" + "---:|" * (len(CUTOFFS) + 1)]
    for row in report["cosines"]:
        lines.append(f"| {row['model']} | " + " | ".join(f"{row[key]:.3f}" for key, _, _ in CUTOFFS)
                     + f" | {row['measure_seconds']:.1f} s |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="minilm,compressed,mpnet",
                        help="comma-separated: minilm, compressed, mpnet, a model folder, or fake:DIM")
    parser.add_argument("--locomo", default=str(locomo.DEFAULT_DATA), metavar="DATA_DIR")
    parser.add_argument("--questions", type=int, default=PER_STORE, metavar="N",
                        help="questions per conversation for the nudge, each way")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    folder = Path(args.locomo)
    if locomo.missing_data(folder):
        return 2
    questions = json.loads(DATA.read_text(encoding="utf-8"))
    off_topic = json.loads(QUERIES.read_text(encoding="utf-8"))["locomo_off"]
    rows, reference, report_cosines, sweeps = [], None, [], {}
    for spec in args.models.split(","):
        embedder = models.embedder(spec)
        memo: dict = {}
        variants = {"before": Scored(embedder, False, memo), "after": Scored(embedder, True, memo)}
        log(f"{embedder.name}: calibration")
        measured = variants["after"].calibration()
        name = embedder.name.split("@")[0]
        report_cosines.append({"model": name, **{key: round(measured.cosine(kind, value), 3)
                                                 for key, kind, value in CUTOFFS},
                               "measure_seconds": measuring_time(embedder)})
        log(f"{embedder.name}: developer notes")
        dev = developer_runs(embedder, variants, questions)
        loco = locomo_runs(embedder, variants, folder, args.questions, off_topic)
        sweeps[name] = sweep(dev["after"], loco["after"])
        for variant in variants:
            row = {"model": name, "variant": variant, **summary(dev[variant], loco[variant], CUTS[variant])}
            if variant == "after" and reference is None:
                reference = row
            row["missed"] = meets(row, reference if variant == "after" else None)
            rows.append(row)
            log(json.dumps(row))
        log(json.dumps({"model": name, "sweep": sweeps[name]}))
    report = {"questions": f"LoCoMo: nudge on {args.questions} related and {args.questions} unrelated questions per"
                           f" conversation, {len(off_topic)} off-topic per conversation; developer notes:"
                           f" {len(questions['related'])} related, {len(questions['off_topic'])} off-topic",
              "rows": rows, "cosines": report_cosines, "sweeps": sweeps}
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
