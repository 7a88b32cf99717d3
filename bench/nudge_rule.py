"""How often the recall nudge fires, for related and unrelated prompts, with several models.

    python bench/nudge_rule.py [--models minilm,compressed,mpnet] [--json]

Saves the 40 developer memories of bench/data/nudge_prompts.json in a fresh
store (ops.remember, as `thatch remember` does) and asks, through
ops/nudge.related (what `thatch flush-tools` lists with a warm model), each
of its prompts:

- related (120: 80 questions that name or paraphrase one memory's subject,
  40 tasks to which one memory applies): nudged when the listed memories
  include that one;
- unrelated (120, developer and everyday prompts, many sharing common words
  with the memories): nudged when anything is listed.

"before" is the rule thatch had: the calibrated cosine alone against
nudge.threshold. "after" is ops/nudge.py's rule, meaning and words. Each row
is one half of the prompts: "tune" is the half the rule's constants were
chosen on, "held_out" the half they were not. Targets: at least 80% of
the related questions nudged (a prompt that names or paraphrases a
memory's subject) and at most 5% of unrelated prompts, with every model.
Tasks are reported, not targeted: most never name what the memory is
about, and the rule only sees the prompt's meaning and words.
Models come from bench/models.py (minilm, compressed, mpnet, a folder, or
fake:DIM for a smoke run); one that cannot be fetched is skipped with a note.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import models  # noqa: E402

from thatch_cli.ops import nudge  # noqa: E402
from thatch_cli.ops.context import Context  # noqa: E402
from thatch_cli.ops.recall import peek  # noqa: E402
from thatch_cli.ops.remember import remember  # noqa: E402
from thatch_cli.support.settings import NUDGE_THRESHOLD  # noqa: E402

DATA = ROOT / "bench" / "data" / "nudge_prompts.json"
TARGETS = {"related": 0.80, "unrelated": 0.05}
SPLITS = ("tune", "held_out")


def before(ctx: Context, prompt: str) -> list[str]:
    """The labels the cosine-alone rule listed (the same candidates, cut on the calibrated cosine)."""
    if len(prompt.strip()) < nudge.MIN_PROMPT_CHARS:
        return []
    outcome = peek(ctx, prompt, limit=nudge.CANDIDATES, floor=0)
    return [r.memory.label for r in outcome.results
            if r.ranked.semantic is not None and r.ranked.semantic >= NUDGE_THRESHOLD][:nudge.MAX_MATCHES]


def after(ctx: Context, prompt: str) -> list[str]:
    return [m.memory.label for m in nudge.related(ctx, prompt, threshold=NUDGE_THRESHOLD)]


RULES = {"before": before, "after": after}


def listed(spec: str, data: dict) -> dict:
    """rule -> "related"/"unrelated" -> [(prompt record, labels listed)]."""
    embedder = models.embedder(spec)
    with tempfile.TemporaryDirectory() as tmp:
        env = {"THATCH_DB": f"{tmp}/bench.db", "THATCH_DAEMON": "0", "HOME": tmp, "THATCH_STORE": "acme/shop",
               "XDG_CONFIG_HOME": f"{tmp}/config"}
        with Context(env=env, cwd=Path(tmp), embedder_factory=lambda _env: embedder) as ctx:
            for memory in data["memories"]:
                remember(ctx, memory["content"], memory["label"])
            return {rule: {kind: [(p, ask(ctx, p["prompt"])) for p in data[kind]] for kind in ("related", "unrelated")}
                    for rule, ask in RULES.items()}


def rates(found: dict, split: str) -> dict:
    related = [bool(set(labels) & set(p["memories"])) for p, labels in found["related"] if p["split"] == split]
    kinds = {kind: statistics.fmean(bool(set(labels) & set(p["memories"])) for p, labels in found["related"]
                                    if p["split"] == split and p["kind"] == kind) for kind in ("question", "task")}
    unrelated = [bool(labels) for p, labels in found["unrelated"] if p["split"] == split]
    return {"related": statistics.fmean(related), **kinds, "unrelated": statistics.fmean(unrelated)}


def log(text: str) -> None:
    print(f"[nudge_rule] {text}", file=sys.stderr, flush=True)


def table(report: dict) -> str:
    lines = [f"{report['prompts']}; nudge.threshold {NUDGE_THRESHOLD}, words from {nudge.WORDS_FROM}"
             f" x {nudge.WORDS_WEIGHT}", "",
             "| model | rule | half | related nudged | questions | tasks | unrelated nudged | targets (questions, unrelated) |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    for row in report["rows"]:
        verdict = "met" if row["met"] else "missed"
        lines.append(f"| {row['model']} | {row['rule']} | {row['split']} | {row['related']:.0%} | {row['question']:.0%}"
                     f" | {row['task']:.0%} | {row['unrelated']:.0%} | {verdict} |")
    lines += [f"- {note}" for note in report["notes"]]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="minilm,compressed,mpnet",
                        help="comma-separated: minilm, compressed, mpnet, a model folder, or fake:DIM")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    rows, notes = [], []
    for spec in args.models.split(","):
        log(f"{spec}: asking")
        try:
            found = listed(spec, data)
        except Exception as exc:  # a model that cannot be fetched here (no network, no space)
            notes.append(f"{spec} skipped: {type(exc).__name__}: {exc}")
            continue
        for rule in RULES:
            for split in SPLITS:
                row = {"model": spec, "rule": rule, "split": split, **rates(found[rule], split)}
                row["met"] = row["question"] >= TARGETS["related"] and row["unrelated"] <= TARGETS["unrelated"]
                rows.append(row)
                log(json.dumps(row))
    report = {"prompts": f"{len(data['memories'])} memories; {len(data['related'])} related and"
                         f" {len(data['unrelated'])} unrelated prompts, half of each in each half",
              "rows": rows, "notes": notes}
    print(json.dumps(report, indent=2) if args.json else table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
