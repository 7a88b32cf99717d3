"""Agent hook latency: `python bench/agent_hooks.py [--runs N] [--size 10000]`.

Wall-clock medians of whole processes, as a host runs them (the host's JSON
payload on stdin), interleaved with `python -c pass` in the same run:

  * `thatch reminder` (session start) on a store of SIZE memories;
  * `thatch flush-tools` (every prompt) with the daemon warm: a prompt that
    matches memories (recall nudge through the daemon), and one with tool
    calls queued (extraction nudge); for reference, the keyword fallback
    with the daemon off;
  * `thatch buffer-batch` (after each batch of tool calls) with a typical
    three-call payload;
  * warm `thatch recall` on the same store, for reference (the recall
    nudge runs the same search).

Targets (issue 11): reminder and buffer-batch under 50 ms, warm
flush-tools under 100 ms. Data: bench/corpus.py's database of SIZE
memories (model all-MiniLM-L6-v2).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import corpus  # noqa: E402
from machine import describe  # noqa: E402
from perf import THATCH, Bench, log, save_report, table  # noqa: E402

BATCH = [
    {"tool_name": "Bash", "tool_input": {"command": "uv run pytest -x -q"}, "tool_use_id": "t1",
     "tool_response": {"stdout": "120 passed in 8.1s", "stderr": ""}},
    {"tool_name": "Read", "tool_input": {"file_path": "src/billing/worker.py"}, "tool_use_id": "t2",
     "tool_response": "def charge(invoice):\n    ...\n" * 40},
    {"tool_name": "Edit", "tool_input": {"file_path": "src/billing/worker.py", "old_string": "a", "new_string": "b"},
     "tool_use_id": "t3", "tool_response": "ok"},
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per measurement (default 30)")
    parser.add_argument("--size", type=int, default=10_000, help="memories in the store (default 10000)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = parser.parse_args(argv)
    vectors, _ = corpus.unique_vectors(log=log)
    database = corpus.scratch_copy(corpus.database(args.size, vectors, corpus.model_path(), log=log), "hooks.sqlite")
    corpus.CACHE.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="thatch-agent-hooks-", dir=corpus.CACHE))
    bench = Bench(max(args.runs, corpus.min_runs()), workdir)
    env = {**bench.env, "THATCH_DB": str(database)}
    if corpus.smoke():  # the test embedder's prompts are never close to its notes: let the nudge fire anyway
        env["THATCH_RECALL_THRESHOLD"] = "0.01"
    started_at = datetime.now(timezone.utc)
    queries = iter(corpus.QUERIES * 1000)
    counter = iter(range(10**6))

    def prompt_payload(session: str, prompt: str) -> str:
        return json.dumps({"session_id": session, "cwd": str(workdir), "hook_event_name": "UserPromptSubmit",
                           "prompt": prompt})

    def run(args: list[str], payload: str, run_env: dict | None = None) -> float:
        return bench.run([*THATCH, *args], run_env or env, input=payload)[0]

    try:
        log("starting the daemon (loads the model once)")
        bench.run([*THATCH, "daemon", "start"], env)
        first = bench.run([*THATCH, "flush-tools"], env, input=prompt_payload("warm", next(queries)))[1]
        if "relate" not in first:
            raise SystemExit(f"flush-tools did not list memories warm: {first}")
        bench.run([*THATCH, "buffer-batch"], env,
                  input=json.dumps({"session_id": "queued", "tool_calls": BATCH}))
        start = json.dumps({"session_id": "s", "cwd": str(workdir), "hook_event_name": "SessionStart",
                            "source": "startup"})
        times = bench.series({
            "pass": lambda: bench.run([sys.executable, "-c", "pass"])[0],
            "reminder": lambda: run(["reminder"], start),
            "recall": lambda: run(["flush-tools"], prompt_payload(f"p{next(counter)}", next(queries))),
            "extraction": lambda: run(["flush-tools"], prompt_payload("queued", "and now the next step please")),
            "keywords": lambda: run(["flush-tools"], prompt_payload(f"k{next(counter)}", next(queries)),
                                    {**env, "THATCH_DAEMON": "0"}),
            "cli": lambda: bench.run([*THATCH, "recall", "--limit", "10", next(queries)], env)[0],
            "buffer": lambda: run(["buffer-batch"], json.dumps({"session_id": f"b{next(counter) % 20}",
                                                                 "tool_calls": BATCH})),
        })
        base = statistics.median(times["pass"])
        bench.add("`python -c pass`", times["pass"])

        def add(name: str, key: str, target: float | None, note: str) -> None:
            median = statistics.median(times[key])
            bench.add(name, times[key], ratio=("python -c pass", median / base),
                      target=f"< {target * 1000:.0f} ms" if target else "", met=median < target if target else None,
                      note=note)

        add(f"`thatch reminder`, {args.size:,} memories", "reminder", 0.050, "session start")
        add(f"`thatch flush-tools`, warm daemon, {args.size:,} memories", "recall", 0.100,
            "recall nudge: hybrid search through the daemon, cosine cut-off")
        add("`thatch flush-tools`, tool calls queued", "extraction", 0.100, "extraction nudge")
        add(f"`thatch flush-tools`, daemon off, {args.size:,} memories", "keywords", None,
            "keyword fallback, for reference")
        add(f"warm `thatch recall`, {args.size:,} memories", "cli", None, "the same search as a command, for reference")
        add("`thatch buffer-batch`, 3 tool calls", "buffer", 0.050, "queue append")
        save_report("\n".join([
            f"Measured {started_at.strftime('%Y-%m-%d %H:%M UTC')} on {describe(torch=True)}.", "",
            f"Wall-clock medians of whole processes over {bench.runs} runs after 2 warm-up runs, series interleaved;"
            " the host's JSON payload on stdin; model all-MiniLM-L6-v2.", "", table(bench)]), "agent-hooks", started_at)
        return 0
    finally:
        bench.run([*THATCH, "daemon", "stop"], env)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
