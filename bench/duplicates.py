"""Cost of `thatch duplicates` on 10,000 memories. Run: python bench/duplicates.py [--runs N] [--size N]

Builds a throwaway database in a temp dir with three stores of --size
memories each, saved through thatch's own MemoryDB with 384-dimensional
float32 vectors (model name "fake:384", which THATCH_MODEL selects here, so
no model is ever loaded):

- random:    independent Gaussian vectors, no pair near 0.85 (the common case);
- clustered: 1 group per 10 memories, each a centre plus small noise
             (pairwise cosine ~0.96): 45 pairs per group, all reported;
- identical: every memory has the same vector, the degenerate worst case
             (size*(size-1)/2 pairs: 49,995,000 for 10k).

For each store a fresh process (so numbers do not leak between cases)
times the library call behind the command (hygiene.duplicates: reading the
rows, the block-wise pair scan, the clusters) --runs times, then once more
under tracemalloc for the peak of Python and numpy allocations, and reports
its peak resident memory (ru_maxrss, which includes the interpreter, numpy
and SQLite) next to its resident memory before the first scan. Then it
times the whole command, `thatch duplicates --json` as a process, the same
number of times. Prints a Markdown table; the budget is 10 s per scan.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from machine import describe  # noqa: E402

MODEL = "fake:384"
DIM = 384
GROUP = 10
BUDGET_SECONDS = 10.0
CASES = ("random", "clustered", "identical")


def vectors(case: str, size: int):
    import numpy as np

    rng = np.random.default_rng(20261130)
    if case == "random":
        rows = rng.normal(size=(size, DIM))
    elif case == "clustered":
        centres = rng.normal(size=(-(-size // GROUP), DIM))
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        rows = np.repeat(centres, GROUP, axis=0)[:size] + rng.normal(scale=0.01, size=(size, DIM))
    else:
        rows = np.repeat(rng.normal(size=(1, DIM)), size, axis=0)
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype("<f4")


def build(db_path: Path, size: int) -> None:
    from thatch_cli.memory.records import Memory
    from thatch_cli.storage.memories import MemoryDB

    db = MemoryDB.open(db_path)
    # Setup only: one fsync per save would make building take minutes.
    db.conn.execute("PRAGMA synchronous = OFF")
    stamp = "2026-11-30T12:00:00.000Z"
    for case in CASES:
        for i, vector in enumerate(vectors(case, size)):
            label = f"{case} note {i:05d}"
            db.save(Memory(store=case, slug=label.replace(" ", "-"), label=label,
                           content=f"# {label}\n\nA note about component {i % 97} for the {case} case.",
                           created_at=stamp, updated_at=stamp, model=MODEL, embedding=vector.tobytes()),
                    overwrite=False, archived=None)
    db.close()


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(db_path: str, store: str, runs: int) -> dict:
    """In a fresh process: time the library scan `runs` times, then once under tracemalloc."""
    import tracemalloc

    import numpy  # noqa: F401  (imported before the baseline, as the command imports it)

    from thatch_cli.ops import dedup
    from thatch_cli.ops.context import Context

    env = {**os.environ, "THATCH_DB": db_path, "THATCH_MODEL": MODEL}

    def scan():
        ctx = Context(env=env, cwd=Path(db_path).parent)
        try:
            return dedup.duplicates(ctx, store)
        finally:
            ctx.close()

    report = None
    before = rss_mb()
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        report = scan()
        seconds.append(time.perf_counter() - started)
    tracemalloc.start()
    scan()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    s = report.scan
    return {"seconds": seconds, "traced_peak_mb": peak / 2**20, "rss_before_mb": before,
            "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "compared": s.compared, "pairs": s.pair_count, "clusters": s.cluster_count,
            "reported": len(s.pairs), "biggest": max((len(c.members) for c in s.clusters), default=0)}


def command_seconds(db_path: Path, store: str, runs: int) -> list[float]:
    thatch = shutil.which("thatch") or str(Path(sys.executable).with_name("thatch"))
    env = {**os.environ, "THATCH_DB": str(db_path), "THATCH_MODEL": MODEL, "THATCH_STORE": store,
           "THATCH_DAEMON": "0"}
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run([thatch, "duplicates", "--json"], env=env, capture_output=True, text=True,
                              cwd=db_path.parent, timeout=600)
        seconds.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"thatch duplicates failed: {done.stderr.strip()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--measure", nargs=2, metavar=("DB", "STORE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure, args.runs)))
        return
    with tempfile.TemporaryDirectory(prefix="thatch-bench-dup-") as tmp:
        db_path = Path(tmp) / "thatch.db"
        started = time.perf_counter()
        build(db_path, args.size)
        print(f"Built {len(CASES)} stores of {args.size:,} memories in {time.perf_counter() - started:.1f} s"
              f" on {describe()}.\n")
        print(f"`thatch duplicates` (threshold 0.85, --limit 200): median of {args.runs} runs each\n")
        print("| store | pairs ≥ 0.85 | clusters | reported pairs | largest cluster | library scan"
              " (median / max) | whole command | traced peak | RSS before → peak | ≤ 10 s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for case in CASES:
            child = subprocess.run([sys.executable, __file__, "--measure", str(db_path), case, "--runs",
                                    str(args.runs)], capture_output=True, text=True, check=True, timeout=1800)
            got = json.loads(child.stdout)
            command = command_seconds(db_path, case, args.runs)
            worst = max(max(got["seconds"]), max(command))
            print(f"| {case} | {got['pairs']:,} | {got['clusters']:,} | {got['reported']} | {got['biggest']:,}"
                  f" | {statistics.median(got['seconds']):.2f} s / {max(got['seconds']):.2f} s"
                  f" | {statistics.median(command):.2f} s | {got['traced_peak_mb']:.0f} MB"
                  f" | {got['rss_before_mb']:.0f} → {got['max_rss_mb']:.0f} MB"
                  f" | {'yes' if worst <= BUDGET_SECONDS else 'NO'} |")


if __name__ == "__main__":
    main()
