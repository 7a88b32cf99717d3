"""What drift checks cost: `python bench/anchors.py [--files 1000] [--changed 100] [--runs 20]`.

A real git repository of FILES source files (60 lines each), one memory
anchored to lines 10-40 of each, in a real SQLite file. Measured in this
process with the database open (as `recall` has it), median of RUNS, each
run a fresh look at the files (the index read, every file stat'ed), as a
new `thatch recall` process has:

  * the drift check of all FILES anchored memories (ops/anchors.of: read the
    anchors, the git index, one stat per file) in an unchanged tree;
  * the same with CHANGED of the anchored files edited in the working tree
    (their blob differs: each is read, its lines hashed and compared);
  * what `recall` adds: marking its results (ops/recall.mark_drift: only the
    ten results are checked, whatever the store holds), with the changed files;
  * the prompt hook (`thatch flush-tools`, a whole process) after the agent
    read five anchored files, against the same hook with nothing to bring
    up, and the hook's deadline.

Targets (issue 31): the check adds <= 10 ms for 1,000 anchored memories in
an unchanged tree and <= 50 ms when 100 anchored files changed; the prompt
hook stays within its deadline. The fake embedder is used throughout:
drift costs no model.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from thatch_cli.hot.deadline import DEFAULT_DEADLINE  # noqa: E402
from thatch_cli.memory.records import Memory  # noqa: E402
from thatch_cli.ops import anchors  # noqa: E402
from thatch_cli.ops.context import Context  # noqa: E402
from thatch_cli.storage import anchors as table  # noqa: E402

STORE = "acme/widget"
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Bench",
           "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "Bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com"}


def git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", *args], cwd=cwd, env={**env, **GIT_ENV}, check=True, capture_output=True)


def source(i: int) -> str:
    return "".join(f"def function_{i}_{n}(value):  # line {n}\n" for n in range(1, 61))


def build(root: Path, files: int, env: dict[str, str]) -> tuple[Path, list[tuple[str, str]]]:
    repo = root / "widget"
    (repo / "src").mkdir(parents=True)
    for i in range(files):
        (repo / "src" / f"module_{i:04d}.py").write_text(source(i))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "git@github.com:acme/widget.git")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "modules")
    keys = []
    with Context(env=env, cwd=repo) as ctx:
        db = ctx.db()
        now = ctx.now()
        for i in range(files):
            label = f"Module {i} validates its input"
            memory = Memory(store=STORE, slug=f"module-{i}-validates-its-input", label=label,
                            content=f"# {label}\n\nfunction_{i}_10 to _40 check the value first.",
                            created_at=now, updated_at=now)
            db.save(memory, overwrite=False, archived=None)
            row = anchors.capture(ctx, anchors.parse(f"src/module_{i:04d}.py:10-40"))
            table.replace(db, STORE, memory.slug, [row], keep_others=False)
            keys.append(memory.key)
    return repo, keys


def median_ms(runs: int, measure) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        measure()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def timed_checks(repo: Path, env: dict[str, str], keys: list[tuple[str, str]], runs: int) -> float:
    """The check alone, in a command that has its database open already (as recall has)."""
    with Context(env=env, cwd=repo) as ctx:
        ctx.place().repo  # noqa: B018 - located once per command, before ranking
        return median_ms(runs, lambda: anchors.of(ctx, keys))


def check_all(repo: Path, env: dict[str, str], keys: list[tuple[str, str]]) -> dict[str, int]:
    with Context(env=env, cwd=repo) as ctx:
        found = anchors.of(ctx, keys)
    states: dict[str, int] = {}
    for drifts in found.drifts.values():
        for d in drifts:
            states[d.state] = states.get(d.state, 0) + 1
    return states


def recall_marks(repo: Path, env: dict[str, str], runs: int) -> float:
    from thatch_cli.ops.recall import mark_drift, peek

    with Context(env=env, cwd=repo) as ctx:
        outcome = peek(ctx, "module validates input", limit=10, mode="lexical")
        return median_ms(runs, lambda: mark_drift(ctx, outcome))


def hook_ms(repo: Path, env: dict[str, str], runs: int, files: list[str]) -> float:
    samples = []
    for n in range(runs):
        session = f"bench-{n}-{len(files)}"
        calls = [{"tool_name": "Read", "tool_input": {"file_path": str(repo / f)}, "tool_response": "..."}
                 for f in files]
        subprocess.run([sys.executable, "-m", "thatch_cli", "buffer-batch"], env=env, cwd=repo, check=True,
                       input=json.dumps({"session_id": session, "cwd": str(repo), "tool_calls": calls}), text=True)
        payload = json.dumps({"session_id": session, "cwd": str(repo), "prompt": "go on"})
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "thatch_cli", "flush-tools"], env=env, cwd=repo,
                                input=payload, text=True, capture_output=True)
        samples.append((time.perf_counter() - started) * 1000)
        if files and "Module" not in result.stdout:
            raise SystemExit(f"the hook did not bring up the anchored memories:\n{result.stdout}")
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="thatch-bench-anchors-") as tmp:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("THATCH_")}, "HOME": str(home),
               "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
               "XDG_STATE_HOME": str(home / ".state"), "XDG_RUNTIME_DIR": str(root),
               "THATCH_DB": str(home / "thatch.db"), "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0"}
        repo, keys = build(root, args.files, env)
        unchanged = timed_checks(repo, env, keys, args.runs)
        quiet_states = check_all(repo, env, keys)
        for i in range(args.changed):
            path = repo / "src" / f"module_{i:04d}.py"
            path.write_text(path.read_text().replace(f"function_{i}_20(", f"function_{i}_20_renamed("))
        changed = timed_checks(repo, env, keys, args.runs)
        busy_states = check_all(repo, env, keys)
        marks = recall_marks(repo, env, args.runs)
        hook_runs = max(1, min(args.runs, 5))
        touched = [f"src/module_{i:04d}.py" for i in range(min(5, args.files))]
        plain_hook = hook_ms(repo, env, hook_runs, [])
        anchored_hook = hook_ms(repo, env, hook_runs, touched)
    rows = [
        (f"drift check, {args.files} anchored memories, unchanged tree", unchanged, "<= 10 ms",
         json.dumps(quiet_states)),
        (f"drift check, {args.changed} of the anchored files changed", changed, "<= 50 ms", json.dumps(busy_states)),
        (f"recall: marking its 10 results (store of {args.files} anchored memories)", marks, "<= 10 ms", ""),
        ("flush-tools, nothing opened (process)", plain_hook, f"<= {DEFAULT_DEADLINE * 1000:.0f} ms", ""),
        (f"flush-tools after reading {len(touched)} anchored files (process)", anchored_hook,
         f"<= {DEFAULT_DEADLINE * 1000:.0f} ms", ""),
    ]
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"{os.cpu_count()} cores, load average {load} (a busy machine inflates every figure)\n")
    print("| measure | median ms | target | states |")
    print("|---|---:|---|---|")
    for name, ms, target, states in rows:
        print(f"| {name} | {ms:.1f} | {target} | {states} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
