"""Performance benchmark: `python bench/perf.py [--quick]`.

Prints a Markdown table of wall-clock medians (with min and max) over
repeated runs of real `thatch` processes, plus ratios measured in the same
run, and saves it to bench/results/. What it measures:

  * light commands (`thatch list`, `thatch stores`) vs `python -c "import typer"`
  * warm `thatch recall` (daemon up, store cached; hybrid, and `--mode semantic` for reference) vs `thatch list`, at 1k,
    10k and 100k memories; cold `thatch recall` (THATCH_DAEMON=0) once
  * warm `thatch remember`
  * `thatch import` throughput vs raw `model.encode` on the same texts
  * the daemon's resident memory

Data: see bench/corpus.py (synthetic developer notes, real MiniLM vectors
cached in bench/.cache/, 100k rows built from 10k embedded notes plus
noise). The first run embeds the 10k notes (a few minutes on 2 cores) and
builds the databases; later runs reuse them.

Every command runs with THATCH_STORE set (no git repository lookup), NO_COLOR
and stdout to a pipe (plain output), in a private HOME and XDG_RUNTIME_DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import corpus  # noqa: E402
from machine import describe  # noqa: E402

THATCH = [sys.executable, "-m", "thatch_cli"]


def log(message: str) -> None:
    print(f"[perf] {message}", file=sys.stderr, flush=True)


class Bench:
    def __init__(self, runs: int, workdir: Path) -> None:
        self.runs = runs
        self.workdir = workdir
        home = workdir / "home"
        run = workdir / "run"
        for d in (home, run):
            d.mkdir(parents=True, exist_ok=True)
        # Bytecode as users have it: pip compiles installed packages, and an
        # editable checkout compiles on first import unless told not to.
        base = {k: v for k, v in os.environ.items()
                if not k.startswith("THATCH_") and k != "PYTHONDONTWRITEBYTECODE"}
        self.env = {
            **base,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_RUNTIME_DIR": str(run),
            "THATCH_MODEL": corpus.model_path(),
            "THATCH_STORE": corpus.STORE,
            "NO_COLOR": "1",
            "HF_HUB_OFFLINE": "1",
        }
        self.rows: list[dict] = []

    def run(self, args: list[str], env: dict | None = None, input: str | None = None) -> tuple[float, str]:
        started = time.perf_counter()
        result = subprocess.run(args, env=env or self.env, cwd=self.workdir, input=input, capture_output=True,
                                text=True)
        elapsed = time.perf_counter() - started
        if result.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}")
        if "daemon unavailable" in result.stderr or "Traceback" in result.stderr:
            raise SystemExit(f"{' '.join(args)}: {result.stderr.strip()}")
        return elapsed, result.stdout

    def series(self, named: dict[str, callable], warmup: int | None = None) -> dict[str, list[float]]:
        """Run each callable `runs` times, interleaved (A B C A B C ...) so
        drift in machine load hits every series alike (after `warmup` rounds:
        2, none in a smoke run)."""
        for _ in range(warmup if warmup is not None else (0 if corpus.smoke() else 2)):
            for fn in named.values():
                fn()
        times: dict[str, list[float]] = {name: [] for name in named}
        for _ in range(self.runs):
            for name, fn in named.items():
                times[name].append(fn())
        return times

    def add(self, name: str, samples: list[float], *, unit: str = "ms", ratio: tuple[str, float] | None = None,
            target: str = "", met: bool | None = None, note: str = "") -> None:
        self.rows.append({"name": name, "samples": samples, "unit": unit, "ratio": ratio, "target": target,
                          "met": met, "note": note})

    def median(self, name: str) -> float:
        return statistics.median(next(r["samples"] for r in self.rows if r["name"] == name))


def fmt(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value * 1000:.1f} ms"
    if unit == "MB":
        return f"{value:.0f} MB"
    return f"{value:.1f} {unit}"


def table(bench: Bench) -> str:
    lines = ["| measurement | runs | median | min | max | ratio (same run) | target | met |",
             "|---|---:|---:|---:|---:|---|---|---|"]
    for row in bench.rows:
        samples, unit = row["samples"], row["unit"]
        ratio = f"{row['ratio'][1]:.2f}x {row['ratio'][0]}" if row["ratio"] else ""
        met = "" if row["met"] is None else ("yes" if row["met"] else "**no**")
        name = row["name"] + (f" ({row['note']})" if row["note"] else "")
        lines.append(f"| {name} | {len(samples)} | {fmt(statistics.median(samples), unit)} | "
                     f"{fmt(min(samples), unit)} | {fmt(max(samples), unit)} | {ratio} | {row['target']} | {met} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k only, fewer import texts")
    parser.add_argument("--runs", type=int, default=None, help="runs per measurement (default 20, quick 10)")
    parser.add_argument("--sizes", default=None, help="comma-separated store sizes (default 1000,10000,100000)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args(argv)
    runs = max(args.runs or (10 if args.quick else 20), corpus.min_runs())
    sizes = [int(s) for s in (args.sizes or ("1000,10000" if args.quick else "1000,10000,100000")).split(",")]
    import_texts = 64 if args.quick else 256

    import compileall

    compileall.compile_dir(str(HERE.parent / "thatch_cli"), quiet=1)
    vectors, embed_seconds = corpus.unique_vectors(log=log)
    model_name = corpus.model_path()
    dbs = {size: corpus.database(size, vectors, model_name, log=log) for size in sizes}
    corpus.CACHE.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="thatch-perf-", dir=corpus.CACHE))
    bench = Bench(runs, workdir)
    env = bench.env
    try:
        started_at = datetime.now(timezone.utc)
        queries = iter(corpus.QUERIES * 1000)

        # -- light commands vs python -c "import typer" ------------------------------
        light_db = corpus.scratch_copy(dbs[min(sizes)], "light.sqlite")
        light_env = {**env, "THATCH_DB": str(light_db)}
        typer_cmd = [sys.executable, "-c", "import typer"]
        times = bench.series({
            "typer": lambda: bench.run(typer_cmd)[0],
            "list": lambda: bench.run([*THATCH, "list"], light_env)[0],
            "stores": lambda: bench.run([*THATCH, "stores"], light_env)[0],
        })
        base = statistics.median(times["typer"])
        bench.add('`python -c "import typer"`', times["typer"])
        for name in ("list", "stores"):
            ratio = statistics.median(times[name]) / base
            bench.add(f"`thatch {name}`", times[name], ratio=("import typer", ratio), target="<= 1.3x",
                      met=ratio <= 1.3, note=f"{min(sizes):,} memories")

        # -- warm recall vs list at each size --------------------------------------------
        log("starting the daemon (loads the model once)")
        bench.run([*THATCH, "daemon", "start"])
        for size in sizes:
            size_env = {**env, "THATCH_DB": str(dbs[size])}
            warmed = bench.run([*THATCH, "recall", "--json", "--floor", "0", "warm the cache"], size_env)[1]
            corpus.check_semantic(warmed, size)
            label = corpus.unique_notes()[0][0]
            times = bench.series({
                "list": lambda: bench.run([*THATCH, "list"], size_env)[0],
                "recall": lambda: bench.run([*THATCH, "recall", next(queries)], size_env)[0],
                "semantic": lambda: bench.run([*THATCH, "recall", "--mode", "semantic", next(queries)], size_env)[0],
                "show": lambda: bench.run([*THATCH, "show", label], size_env)[0],
            })
            list_median = statistics.median(times["list"])
            ratio = statistics.median(times["recall"]) / list_median
            target = 1.5 if size <= 10_000 else 2.0
            bench.add(f"`thatch list`, {size:,} memories", times["list"])
            bench.add(f"warm `thatch recall`, {size:,} memories", times["recall"],
                      ratio=("list", ratio), target=f"<= {target}x list" if size >= 10_000 else "",
                      met=(ratio <= target) if size >= 10_000 else None, note="hybrid, the default")
            bench.add(f"warm `thatch recall --mode semantic`, {size:,} memories", times["semantic"],
                      ratio=("hybrid/semantic", statistics.median(times["recall"]) / statistics.median(times["semantic"])),
                      note="dense ranking alone, for reference")
            show_ratio = statistics.median(times["recall"]) / statistics.median(times["show"])
            bench.add(f"`thatch show LABEL`, {size:,} memories", times["show"],
                      ratio=("recall/show", show_ratio), note="one-row light command, for reference")

        status = json.loads(bench.run([*THATCH, "daemon", "status", "--json"])[1])
        bench.add("daemon resident memory", [status["rss_bytes"] / 2**20], unit="MB",
                  note=f"model + {status['cached_vectors']:,} cached vectors")

        # -- cold recall, once ---------------------------------------------------------------
        cold_size = 10_000 if 10_000 in sizes else sizes[0]
        cold_env = {**env, "THATCH_DB": str(dbs[cold_size]), "THATCH_DAEMON": "0"}
        cold = bench.run([*THATCH, "recall", next(queries)], cold_env)[0]
        bench.add(f"cold `thatch recall` (THATCH_DAEMON=0), {cold_size:,} memories", [cold],
                  note="once: loads the model in-process")

        # -- warm remember -----------------------------------------------------------------
        remember_size = 10_000 if 10_000 in sizes else sizes[0]
        scratch = corpus.scratch_copy(dbs[remember_size], "remember.sqlite")
        remember_env = {**env, "THATCH_DB": str(scratch)}
        bench.run([*THATCH, "recall", "warm the cache"], remember_env)
        counter = iter(range(10**6))
        notes = corpus.unique_notes()

        def remember() -> float:
            i = next(counter)
            label, body = notes[(i * 7919) % len(notes)]
            return bench.run([*THATCH, "remember", f"bench note {i}", body], remember_env)[0]

        times = bench.series({"list": lambda: bench.run([*THATCH, "list"], remember_env)[0],
                              "remember": remember})
        ratio = statistics.median(times["remember"]) / statistics.median(times["list"])
        bench.add(f"warm `thatch remember`, {remember_size:,} memories", times["remember"], ratio=("list", ratio),
                  note="embed + near-duplicate check + write")

        # -- import throughput vs raw encode --------------------------------------------------
        log("loading the model in the benchmark process for raw encode")
        model = corpus.load_model()
        import random

        rng = random.Random(4242)
        import_runs = []
        raw_runs = []
        for run_index in range(bench.runs):
            texts = []
            lines = []
            for j in range(import_texts):
                label, body = corpus.note(rng)
                label = f"{label} import {run_index}-{j}"
                lines.append(json.dumps({"label": label, "content": corpus.passage(label, body)}))
                texts.append(corpus.passage(label, body))
            source = workdir / "import.jsonl"
            source.write_text("\n".join(lines) + "\n")
            target_db = workdir / f"import-{run_index}.sqlite"
            elapsed, out = bench.run([*THATCH, "import", str(source), "--json"], {**env, "THATCH_DB": str(target_db)})
            report = json.loads(out)
            assert report["created"] == import_texts and report["embedded"] == import_texts, report
            import_runs.append(import_texts / elapsed)
            started = time.perf_counter()
            model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                         show_progress_bar=False)
            raw_runs.append(import_texts / (time.perf_counter() - started))
            target_db.unlink(missing_ok=True)
        ratio = statistics.median(import_runs) / statistics.median(raw_runs)
        bench.add(f"raw `model.encode` throughput, {import_texts} texts", raw_runs, unit="texts/s")
        bench.add(f"`thatch import` throughput, {import_texts} texts", import_runs, unit="texts/s",
                  ratio=("raw encode", ratio), target=">= 0.8x raw", met=ratio >= 0.8,
                  note="whole process: start, parse, embed via daemon, write")

        bench.run([*THATCH, "daemon", "stop"])
        save_report(render(bench, started_at, embed_seconds), "perf", started_at)
        return 0
    finally:
        try:
            subprocess.run([*THATCH, "daemon", "stop"], env=env, capture_output=True, timeout=30)
        except Exception:
            pass
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def save_report(report: str, name: str, started_at: datetime) -> None:
    """Print the report and keep it as bench/results/NAME-TIMESTAMP.md."""
    print(report)
    results = corpus.results_dir()
    results.mkdir(parents=True, exist_ok=True)
    out = results / f"{name}-{started_at.strftime('%Y%m%d-%H%M%S')}.md"
    out.write_text(report + "\n")
    log(f"saved {out}")


def render(bench: Bench, started_at: datetime, embed_seconds: float | None) -> str:
    lines = [
        f"Measured {started_at.strftime('%Y-%m-%d %H:%M UTC')} on {describe(torch=True)}.",
        "",
        f"Wall-clock time of whole `thatch` processes (Python start-up included), {bench.runs} runs each after"
        " 2 warm-up runs, series interleaved; model all-MiniLM-L6-v2 (384 dimensions).",
        "",
        table(bench),
    ]
    if embed_seconds:
        lines += ["", f"(Embedding the {corpus.UNIQUE:,} unique notes for the corpus took {embed_seconds:.0f} s"
                  f" = {corpus.UNIQUE / embed_seconds:.0f} texts/s.)"]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
