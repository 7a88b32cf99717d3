"""Concurrency and crash scenarios at full size, each checked afterwards for
lost memories, failed commands, SQLite integrity and an exact keyword index.

    python bench/stress.py [--writers 8] [--memories 200] [--model fake:384] [--only NAME...] [--json]

Every writer is its own process running thatch's real entry point
(`thatch_cli.__main__.run`, the fast path and the error policy included)
once per operation, against one database file:

- concurrent writes: W writers save M memories each while a reader recalls
  (and stamps) in a loop;
- churn: W writers each save, overwrite, forget and restore (restore-memory)
  their own M memories;
- recall under a lock: another process holds the write lock in bursts while
  W readers recall M times each (results must come back; stamps may be skipped);
- backups while writing: W writers save M memories while `thatch backup`
  runs in a loop (every backup must verify);
- kill -9 during import: a W*M*10-line import killed after its first
  commit, then run again;
- kill -9 during reindex: re-embedding every memory for another model,
  killed half-way, then run again;
- kill -9 of the daemon: W writers save M memories through the daemon while
  it is killed every half second.

"lost" counts memories (or vectors, for reindex) that should be there and
are not; "errors" counts commands that exited non-zero (the kill -9'd
process itself excepted).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from thatch_cli.storage.maintenance import index_problems  # noqa: E402

from machine import describe  # noqa: E402

STORE = "stress/widget"

# One process: run OPS, a JSON list of argv lists, through thatch's entry
# point; print {"codes": {exit code: count}}.
WORKER = """
import json, os, sys
sys.path.insert(0, {root!r})
from thatch_cli.__main__ import run
from thatch_cli.context import Context
codes = {{}}
with open(os.devnull, "w") as quiet:
    for argv in json.load(open(sys.argv[1])):
        ctx = Context.from_process()
        ctx.stdout = ctx.stderr = quiet
        code = run(argv, ctx)
        codes[code] = codes.get(code, 0) + 1
print(json.dumps({{"codes": codes}}))
"""


class Lab:
    def __init__(self, args) -> None:
        self.args = args
        self.dir = Path(tempfile.mkdtemp(prefix="thatch-stress-"))
        self.runtime = self.dir / "run"
        self.runtime.mkdir(mode=0o700)

    def env(self, db: Path, **extra) -> dict[str, str]:
        return {**os.environ, "THATCH_DB": str(db), "THATCH_MODEL": self.args.model, "THATCH_STORE": STORE,
                "THATCH_DAEMON": "0", "XDG_RUNTIME_DIR": str(self.runtime), "HOME": str(self.dir),
                "XDG_CACHE_HOME": str(self.dir / "cache"), **extra}

    def start(self, db: Path, ops: list[list[str]], name: str, **env) -> subprocess.Popen:
        plan = self.dir / f"{name}.json"
        plan.write_text(json.dumps(ops))
        return subprocess.Popen([sys.executable, "-c", WORKER.format(root=str(ROOT)), str(plan)],
                                env=self.env(db, **env), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def thatch(self, db: Path, *args: str, **env) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=self.env(db, **env),
                              capture_output=True, text=True)


def finish(processes: list[subprocess.Popen]) -> int:
    """Wait for workers; the number of operations that exited non-zero."""
    errors = 0
    for process in processes:
        out, _ = process.communicate()
        if process.returncode != 0:
            errors += 1
            continue
        errors += sum(n for code, n in json.loads(out.strip().splitlines()[-1])["codes"].items() if code != "0")
    return errors


def check(db: Path) -> tuple[str, str, sqlite3.Connection]:
    conn = sqlite3.connect(db, timeout=30)
    integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
    problems = index_problems(conn)
    index = "exact" if not any(problems.values()) else f"{problems['wrong']} wrong, {problems['orphans']} orphans"
    return integrity, index, conn


def row(name: str, size: str, lost: int, errors: int, db: Path, started: float, note: str = "") -> dict:
    integrity, index, conn = check(db)
    conn.close()
    return {"scenario": name, "size": size, "lost": lost, "errors": errors, "integrity": integrity,
            "index": index, "seconds": round(time.monotonic() - started, 1), "note": note}


def count(db: Path, where: str = "1", args: tuple = ()) -> int:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute(f"SELECT count(*) FROM entries WHERE {where}", args).fetchone()[0]
    finally:
        conn.close()


def saves(writer: int, memories: int, extra: tuple[str, ...] = ()) -> list[list[str]]:
    return [["remember", f"w{writer} note {i}", f"writer {writer} memory {i}: deploy step {i % 17}", *extra]
            for i in range(memories)]


# -- scenarios -----------------------------------------------------------------------------------


def concurrent_writes(lab: Lab, w: int, m: int) -> dict:
    db = lab.dir / "writes.db"
    started = time.monotonic()
    writers = [lab.start(db, saves(i, m), f"writes-{i}") for i in range(w)]
    reader = lab.start(db, [["recall", "deploy step 3"]] * m, "reader")
    errors = finish(writers + [reader])
    return row("concurrent writes + a recalling reader", f"{w} × {m}", w * m - count(db), errors, db, started)


def churn(lab: Lab, w: int, m: int) -> dict:
    db = lab.dir / "churn.db"
    started = time.monotonic()
    plans = []
    for i in range(w):
        ops = []
        for j in range(m):
            label = f"w{i} note {j}"
            ops += [["remember", label, f"first text {i}-{j}"], ["remember", label, f"second text {i}-{j}",
                                                                  "--overwrite"]]
            if j % 4 == 0:
                ops += [["forget", label], ["restore-memory", label]]
        plans.append(lab.start(db, ops, f"churn-{i}"))
    errors = finish(plans)
    lost = w * m - count(db, "content LIKE '%second text%'")
    conn = sqlite3.connect(db)
    versions = conn.execute("SELECT count(*) FROM thatch_cli_history").fetchone()[0]
    conn.close()
    return row("churn: save, overwrite, forget, restore-memory", f"{w} × {m}", lost, errors, db, started,
               f"{versions} versions kept")


def recall_under_lock(lab: Lab, w: int, m: int) -> dict:
    db = lab.dir / "locked.db"
    lab.start(db, saves(0, 50), "lock-seed").communicate()
    stop = threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(db, isolation_level=None, timeout=30)
        while not stop.is_set():
            conn.execute("BEGIN IMMEDIATE")
            time.sleep(0.8)
            conn.execute("COMMIT")
            time.sleep(0.2)
        conn.close()

    holder = threading.Thread(target=hold)
    started = time.monotonic()
    holder.start()
    try:
        errors = finish([lab.start(db, [["recall", "deploy step"]] * m, f"locked-{i}") for i in range(w)])
    finally:
        stop.set()
        holder.join()
    stamped = count(db, "recall_count > 0")
    return row("recall while another process holds the write lock", f"{w} × {m}", 50 - count(db), errors, db,
               started, f"{stamped} of 50 memories got a recall stamp")


def backups_while_writing(lab: Lab, w: int, m: int) -> dict:
    db = lab.dir / "backups.db"
    lab.start(db, saves(99, 1), "backup-seed").communicate()
    started = time.monotonic()
    writers = [lab.start(db, saves(i, m), f"backup-writer-{i}") for i in range(w)]
    made = failed = 0
    while any(p.poll() is None for p in writers):
        result = lab.thatch(db, "backup", str(lab.dir), "--json")
        made += result.returncode == 0
        failed += result.returncode != 0
    errors = finish(writers) + failed
    return row("backups (VACUUM INTO, verified) while writing", f"{w} × {m}", w * m + 1 - count(db), errors, db,
               started, f"{made} verified backups")


def wait_for(predicate, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.005)


def batches(kept: int, total: int) -> str:
    if kept == total:
        return "finished before the kill"
    return "whole batches of 256" if kept % 256 == 0 else "PARTIAL BATCH"


def kill_during_import(lab: Lab, w: int, m: int) -> dict:
    db = lab.dir / "import.db"
    total = w * m * 10
    source = lab.dir / "import.jsonl"
    with open(source, "w") as fh:
        for i in range(total):
            fh.write(json.dumps({"label": f"imported {i}", "content": f"fact {i} about the build " * 8}) + "\n")
    lab.thatch(db, "stores")
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "thatch_cli", "import", str(source)], env=lab.env(db),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: count(db) > 0)
    time.sleep(0.3)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = count(db)
    again = lab.thatch(db, "import", str(source), "--json")
    report = json.loads(again.stdout)
    return row("kill -9 during import, then import again", f"{total} lines", total - count(db),
               int(again.returncode != 0), db, started,
               f"{kept} kept at the kill ({batches(kept, total)}),"
               f" {report['skipped']} skipped on rerun")


def kill_during_reindex(lab: Lab, w: int, m: int) -> dict:
    db = lab.dir / "import.db"
    other = "fake:192" if lab.args.model != "fake:192" else "fake:96"
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "thatch_cli", "reindex"], env=lab.env(db, THATCH_MODEL=other),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    total = count(db)
    wait_for(lambda: count(db, "model = ?", (other,)) > 0)
    time.sleep(0.3)
    process.send_signal(signal.SIGKILL)
    process.wait()
    moved = count(db, "model = ?", (other,))
    again = lab.thatch(db, "reindex", THATCH_MODEL=other)
    lost = total - count(db, "model = ? AND length(embedding) = ?", (other, 4 * int(other.split(":")[1])))
    return row("kill -9 during reindex, then reindex again", f"{total} memories", lost, int(again.returncode != 0),
               db, started, f"{moved} re-embedded at the kill")


def kill_the_daemon(lab: Lab, w: int, m: int) -> dict:
    db = lab.dir / "daemon.db"
    lab.thatch(db, "stores")
    started = time.monotonic()
    writers = [lab.start(db, saves(i, m), f"daemon-writer-{i}", THATCH_DAEMON="1") for i in range(w)]
    kills = 0
    while any(p.poll() is None for p in writers):
        time.sleep(0.5)
        try:
            pid = int((lab.runtime / "thatch" / "daemon.pid").read_text().split()[0])
            os.kill(pid, signal.SIGKILL)
            kills += 1
        except (OSError, ValueError, IndexError):
            pass
    errors = finish(writers)
    with_vectors = count(db, "embedding IS NOT NULL")
    lab.thatch(db, "daemon", "stop", THATCH_DAEMON="1")
    return row("kill -9 of the daemon every 0.5 s while writing through it", f"{w} × {m}", w * m - count(db), errors,
               db, started, f"{kills} daemons killed, {with_vectors} of {count(db)} saved with a vector")


SCENARIOS = [concurrent_writes, churn, recall_under_lock, backups_while_writing, kill_during_import,
             kill_during_reindex, kill_the_daemon]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--model", default="fake:384", help="THATCH_MODEL for every process (default fake:384)")
    parser.add_argument("--only", nargs="*", choices=[s.__name__ for s in SCENARIOS], help="run these scenarios only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    lab = Lab(args)
    rows = [scenario(lab, args.writers, args.memories) for scenario in SCENARIOS
            if not args.only or scenario.__name__ in args.only]
    if args.json:
        print(json.dumps({"machine": describe(), "model": args.model, "rows": rows}, indent=2))
        return
    print(f"Machine: {describe()}; model {args.model}\n")
    print("| scenario | writers × memories | lost | errors | integrity | index | seconds | notes |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['scenario']} | {r['size']} | {r['lost']} | {r['errors']} | {r['integrity']} | {r['index']}"
              f" | {r['seconds']} | {r['note']} |")


if __name__ == "__main__":
    main()
