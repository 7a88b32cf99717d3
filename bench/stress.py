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
  it is killed every half second;
- first use: W/2 processes of 10 threads each start saving at once into a
  database that does not exist yet, round after round (creating and
  converting it must never fail anyone);
- kill -9 during `backup PATH`: killed while copying, then the same PATH
  again (never an empty or partial file at PATH, never refused by one);
- overload: W writers and two recall loops through the daemon while it is
  stopped (SIGSTOP) for a few seconds and then killed, over and over; per
  command wall time (p50, p95, over 30 s) and how many commands loaded the
  model in their own process (the herd this must not become); then a
  `thatch reindex` embeds what was saved without a vector ("lost" counts
  memories still without one).

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
from thatch_cli.ops.context import Context
codes = {{}}
with open(os.devnull, "w") as quiet:
    for argv in json.load(open(sys.argv[1])):
        ctx = Context.from_process()
        ctx.stdout = ctx.stderr = quiet
        code = run(argv, ctx)
        codes[code] = codes.get(code, 0) + 1
print(json.dumps({{"codes": codes}}))
"""

# WORKER with its commands run by 10 threads at once (an MCP server answers
# calls in threads): the most a process can press on a new file.
THREADED = """
import json, os, sys, threading
sys.path.insert(0, {root!r})
from thatch_cli.__main__ import run
from thatch_cli.ops.context import Context
codes = {{}}
lock = threading.Lock()
quiet = open(os.devnull, "w")
def one(argv):
    ctx = Context.from_process()
    ctx.stdout = ctx.stderr = quiet
    code = run(argv, ctx)
    with lock:
        codes[code] = codes.get(code, 0) + 1
threads = [threading.Thread(target=one, args=(argv,)) for argv in json.load(open(sys.argv[1]))]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps({{"codes": codes}}))
"""

# Like WORKER, one process per command (a command line's whole cost,
# start-up included), timing each and noting those that embedded
# in-process; prints {{"codes": ..., "seconds": [...], "in_process": n,
# "failures": [last stderr line, ...]}}.
TIMED = """
import json, subprocess, sys, time
codes, seconds, in_process, failures = {{}}, [], 0, []
for argv in json.load(open(sys.argv[1])):
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "thatch_cli", *argv], capture_output=True, text=True)
    seconds.append(time.monotonic() - started)
    codes[done.returncode] = codes.get(done.returncode, 0) + 1
    in_process += "in-process" in done.stderr
    if done.returncode:
        failures.append(done.stderr.strip().splitlines()[-1:])
print(json.dumps({{"codes": codes, "seconds": seconds, "in_process": in_process, "failures": failures}}))
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

    def start(self, db: Path, ops: list[list[str]], name: str, worker: str = WORKER, **env) -> subprocess.Popen:
        plan = self.dir / f"{name}.json"
        plan.write_text(json.dumps(ops))
        return subprocess.Popen([sys.executable, "-c", worker.format(root=str(ROOT)), str(plan)],
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


def first_use(lab: Lab, w: int, m: int) -> dict:
    """W/2 processes at once on a file that does not exist yet (as MCP servers
    and CLIs of several agent sessions starting together), each saving 10
    memories from 10 threads at once, 12 rounds."""
    started = time.monotonic()
    rounds, per, writers = 12, 10, max(2, w // 2)
    errors = lost = 0
    for number in range(rounds):
        db = lab.dir / f"first-{number}.db"
        errors += finish([lab.start(db, saves(i, per), f"first-{number}-{i}", worker=THREADED)
                          for i in range(writers)])
        lost += writers * per - count(db)
    return row("first use: writers start at once on a database that does not exist", f"{rounds} × {writers} × {per}",
               lost, errors, db, started)


def kill_during_backup(lab: Lab, w: int, m: int) -> dict:
    """`thatch backup PATH` killed mid-copy, W times, each followed by a
    backup to the same PATH: none may be refused, none may leave a bad file."""
    db = lab.dir / "backup-source.db"
    lines = "".join(json.dumps({"label": f"note {i}", "content": f"fact {i} about the build " * 40}) + "\n"
                    for i in range(3000))
    subprocess.run([sys.executable, "-m", "thatch_cli", "import", "-"], input=lines, text=True, env=lab.env(db),
                   capture_output=True)
    folder = lab.dir / "backups-killed"
    folder.mkdir(exist_ok=True)
    started = time.monotonic()
    refused = bad = 0
    for number in range(w):
        target = folder / f"b{number}.db"
        process = subprocess.Popen([sys.executable, "-m", "thatch_cli", "backup", str(target)], env=lab.env(db),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: any(folder.glob(f"*b{number}.db*")))
        process.send_signal(signal.SIGKILL)
        process.wait()
        if target.exists():
            from thatch_cli.storage.backup import BackupFailed, verify

            try:
                whole = verify(target).get("entries") == 3000
            except BackupFailed:
                whole = False
            if whole:
                continue
            bad += 1  # an empty or partial file where the backup should be
        refused += lab.thatch(db, "backup", str(target)).returncode != 0
    return row("kill -9 during backup PATH, then backup PATH again", f"{w} kills", 0, bad + refused, db, started,
               f"{bad} left an empty or partial file at PATH, {refused} later backups to PATH refused")


def overload(lab: Lab, w: int, m: int) -> dict:
    """W writers (M/4 saves each, at least 4) and two recall loops, every command its own
    process through the daemon, while the daemon is stopped for 3 s and then
    killed, every 6 s."""
    db = lab.dir / "overload.db"
    lab.thatch(db, "stores")
    per = max(4, m // 4)
    started = time.monotonic()
    env = {"THATCH_DAEMON": "1"}
    workers = [lab.start(db, saves(i, per), f"overload-{i}", worker=TIMED, **env) for i in range(w)]
    workers += [lab.start(db, [["recall", f"deploy step {i % 17}"]] * per, f"overload-recall-{i}", worker=TIMED, **env)
                for i in range(2)]
    stops = 0
    while any(p.poll() is None for p in workers):
        time.sleep(3)
        try:
            pid = int((lab.runtime / "thatch" / "daemon.pid").read_text().split()[0])
            os.kill(pid, signal.SIGSTOP)
            stops += 1
            time.sleep(3)
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass
    seconds, in_process, errors, failures = [], 0, 0, []
    for process in workers:
        out, _ = process.communicate()
        report = json.loads(out.strip().splitlines()[-1])
        seconds += report["seconds"]
        in_process += report["in_process"]
        errors += sum(n for code, n in report["codes"].items() if code != "0")
        failures += report["failures"]
    if failures and not lab.args.json:
        print(f"overload failures: {failures[:5]}", file=sys.stderr)
    with_vectors = count(db, "embedding IS NOT NULL")
    # Once the storm is over, the memories saved without a vector are embedded.
    errors += lab.thatch(db, "reindex", **env).returncode != 0
    lab.thatch(db, "daemon", "stop", **env)
    seconds.sort()
    p50, p95 = seconds[len(seconds) // 2], seconds[int(len(seconds) * 0.95)]
    slow = sum(1 for s in seconds if s > 30)
    return row("overload: writers and recalls through a daemon stopped then killed every 6 s",
               f"{w} × {per} + 2 × {per}", w * per - count(db, "embedding IS NOT NULL"), errors, db, started,
               f"{stops} stops; {len(seconds)} commands, p50 {p50:.2f} s, p95 {p95:.2f} s, {slow} over 30 s;"
               f" {in_process} loaded the model in-process; {with_vectors} of {count(db)} saved with a vector,"
               " the rest embedded by `thatch reindex` afterwards")


SCENARIOS = [concurrent_writes, churn, recall_under_lock, backups_while_writing, kill_during_import,
             kill_during_reindex, kill_the_daemon, first_use, kill_during_backup, overload]


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
