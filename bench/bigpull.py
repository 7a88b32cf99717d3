"""The first pull of many memories, for `python bench/sync.py --only bigpull`.

Per run: clone A pushes N memories (fake model: records carry no vectors,
so the pusher's model does not matter); a plain `git fetch` of the ref into
an empty repository is timed; clone B (with --model) runs `thatch sync`,
and the bench polls B's database until every memory is in the keyword
index, then until they have vectors. As soon as the rows are in, a third
clone C pushes one new memory and B runs a second `thatch sync`, which
must exit 0 and bring it in while the first one embeds. The plain fetch is
timed again once B's embedding stopped (before and after: the machine's
load drifts), and the ratio is keywords / the median fetch.

Embedding every memory with a real model takes minutes to twenty minutes
on two cores: `--embed-sample K` stops B once K memories have vectors,
measures the rate from the first vector to the K-th, and extrapolates the
time until all N have one (reported as extrapolated). Without it the bench
waits for all N and also measures the alternative of vectors travelling in
the records (the ref's size and fetch time).
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syncteam import THATCH, Clone, fill, git, log, pack_kib, team

POLL = 0.05
LIMIT = 3600.0  # seconds a run may take before it is given up


@dataclass
class Pull:
    """One run's figures (seconds from the start of B's first `thatch sync`)."""

    fetch: list[float] = field(default_factory=list)
    keywords: float = math.nan
    first_vector: float = math.nan  # after the rows: the model's loading and first batch
    progress: list[tuple[float, int]] = field(default_factory=list)  # (seconds, memories with vectors)
    meaning: float = math.nan  # all have vectors (measured)
    second: tuple[int, float, int] = (-1, math.nan, 0)  # exit code, seconds, memories it pulled
    ref_kib: float = math.nan
    vectors_kib: float = math.nan
    fetch_vectors: float = math.nan

    @property
    def rate(self) -> float:
        """Memories embedded per second, from the first vector to the last one seen (one poll: since the rows)."""
        seen = [(t, n) for t, n in self.progress if n > 0]
        if not seen:
            return math.nan
        if len(seen) < 2:  # all came in one poll: over the time since the rows were in
            return seen[0][1] / (seen[0][0] - self.keywords)
        return (seen[-1][1] - seen[0][1]) / (seen[-1][0] - seen[0][0])

    def all_by_meaning(self, count: int) -> tuple[float, bool]:
        """When all `count` are searchable by meaning, and whether that is extrapolated."""
        if not math.isnan(self.meaning):
            return self.meaning, False
        if not self.progress or math.isnan(self.rate) or self.rate <= 0:
            return math.nan, True
        at, done = self.progress[-1]
        return at + (count - done) / self.rate, True


def fetch_seconds(base: Path, url: str, env: dict[str, str]) -> float:
    """A plain `git fetch` of the memories ref into an empty repository."""
    fresh = Path(tempfile.mkdtemp(prefix="fetch-", dir=base))
    git(fresh, "init", "-q", env=env)
    started = time.perf_counter()
    git(fresh, "fetch", "-q", url, "refs/thatch/memories:refs/thatch/fetched", env=env)
    return time.perf_counter() - started


def with_vectors(clone: Clone, bare: Path) -> None:
    """The alternative design, for its size and fetch time: the ref `clone`
    fetched, with each record carrying the vector `clone` made of its
    memory (base64 float32), pushed as refs/thatch/memories of `bare`."""
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


def _counts(db: Path, count: int) -> tuple[int, int, bool]:
    """(rows, rows with vectors, whether the last memory is in the keyword index)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            rows, vectors = conn.execute("SELECT count(*), count(embedding) FROM entries").fetchone()
            hit = conn.execute("SELECT 1 FROM entries_fts WHERE entries_fts MATCH ?",
                               (f'"number {count - 1}"',)).fetchone()
    except sqlite3.Error:
        return 0, 0, False
    return rows, vectors, hit is not None


def one_pull(args: Any, count: int, ssh: str | None, base: Path) -> Pull:
    found = Pull()
    bare, (ann,) = team(base, 1, "fake:384", ssh)
    bob = cat = None
    try:
        fill(ann, count)
        ann.sync()
        cat = Clone(base, "cat", bare, "fake:384", ssh)
        cat.sync()  # C holds the memories before the measurement: its push then adds one
        bob = Clone(base, "bob", bare, args.model, ssh)
        url = f"{'ssh://thatch-test' if ssh else ''}{bare}"
        found.fetch.append(fetch_seconds(base, url, bob.env))
        _measure(args, count, found, bob, cat)
        bob.close()  # its daemon may still embed the batch the sync was stopped in
        found.fetch.append(fetch_seconds(base, url, bob.env))
        _, out = bob.thatch("recall", "--mode", "lexical", "--json", f"Note {count - 1}")
        assert json.loads(out)["results"], "not found by keywords"
        found.ref_kib = float(pack_kib(bare))
        if not math.isnan(found.meaning) and count <= 10_000:
            vec_bare = base / "vectors.git"
            git(base, "init", "-q", "--bare", str(vec_bare))
            with_vectors(bob, vec_bare)
            found.vectors_kib = float(pack_kib(vec_bare))
            found.fetch_vectors = fetch_seconds(base, str(vec_bare) if not ssh else f"ssh://thatch-test{vec_bare}",
                                                bob.env)
    finally:
        for clone in (ann, cat, bob):
            if clone is not None:
                clone.close()
    return found


def _measure(args: Any, count: int, found: Pull, bob: Clone, cat: Clone) -> None:
    """B's first sync, polled until all are embedded (or --embed-sample are), with C's change pulled meanwhile."""
    sample = min(args.embed_sample or count, count)
    started = time.perf_counter()
    first = subprocess.Popen([*THATCH, "sync", "--json"], cwd=bob.path, env=bob.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)

    def another() -> None:
        """C pushes a new memory; B's second sync, while the first one embeds, must pull it and exit 0."""
        cat.thatch("remember", f"Third machine note {count}", "Rotate the staging keys before the release.")
        cat.sync()
        at = time.perf_counter()
        other = subprocess.run([*THATCH, "sync", "--json"], cwd=bob.path, env=bob.env, capture_output=True,
                               text=True, check=False)
        took = time.perf_counter() - at
        pulled = json.loads(other.stdout)["pulled"]["created"] if other.returncode == 0 else 0
        found.second = (other.returncode, took, pulled)
        if other.returncode:
            log(f"the second sync failed: {other.stderr.strip()[-300:]}")

    meanwhile = threading.Thread(target=another)
    try:
        while time.perf_counter() - started < LIMIT:
            rows, vectors, hit = _counts(bob.db, count)
            now = time.perf_counter() - started
            if math.isnan(found.keywords) and hit and rows >= count:
                found.keywords = now
                meanwhile.start()
            if not math.isnan(found.keywords):
                if vectors and math.isnan(found.first_vector):
                    found.first_vector = now - found.keywords
                if not found.progress or found.progress[-1][1] != vectors:
                    found.progress.append((now, vectors))
                if vectors >= count:
                    found.meaning = now
                    break
                if vectors >= sample:
                    break
            if first.poll() is not None and (math.isnan(found.keywords) or vectors < sample):
                _, err = first.communicate()
                raise RuntimeError(f"the first sync ended ({first.returncode}) before the bench saw"
                                   f" {sample} vectors: {err.strip()[-300:]}")
            time.sleep(POLL if math.isnan(found.keywords) else 0.5)
    finally:
        if meanwhile.ident is not None:
            meanwhile.join(LIMIT)
        if first.poll() is None:
            first.terminate()  # --embed-sample: the rest is extrapolated
        first.communicate(timeout=120)


def _median(values: list[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return statistics.median(kept) if kept else math.nan


def big_pull(args: Any, rows: list, ssh: str | None) -> None:
    """Every --pull-sizes count, --runs times (see the module doc)."""
    how = "ssh" if ssh else "path"
    for count in args.pull_sizes:
        pulls: list[Pull] = []
        for run in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="thatch-sync-") as tmp:
                pulls.append(one_pull(args, count, ssh, Path(tmp)))
            p = pulls[-1]
            meaning, guessed = p.all_by_meaning(count)
            log(f"first pull of {count}, {how}, run {run + 1}: git fetch {p.fetch[0]:.2f} s / {p.fetch[1]:.2f} s,"
                f" keywords {p.keywords:.2f} s ({p.keywords / statistics.mean(p.fetch):.2f}x), first vector"
                f" {p.first_vector:.1f} s after the rows, {p.rate:.1f} memories/s, all by meaning"
                f" {meaning:.0f} s{' (extrapolated)' if guessed else ''}; second sync (exit, s, pulled) {p.second}")
        _rows(args, rows, count, how, pulls)


def _rows(args: Any, rows: list, count: int, how: str, pulls: list[Pull]) -> None:
    model = Path(args.model).parent.name if Path(args.model).is_dir() else args.model  # the package, not a path
    label = f"first pull of {count:,} memories, {how}, {model}"
    fetches = [f for p in pulls for f in p.fetch]
    keywords = [p.keywords for p in pulls]
    meaning = [p.all_by_meaning(count) for p in pulls]
    guessed = any(g for _, g in meaning)
    rows += [(f"{label}: plain git fetch of the ref (before and after each run)", fetches, "s"),
             (f"{label}: all searchable by keywords (thatch sync)", keywords, "s"),
             (f"{label}: ratio of the medians, keywords / git fetch (target at most 3)",
              [_median(keywords) / _median(fetches)], ""),
             (f"{label}: ratio per run, keywords / mean of its two fetches",
              [p.keywords / statistics.mean(p.fetch) for p in pulls], ""),
             (f"{label}: a second thatch sync (C's new memory) started when the rows were in: exit code",
              [float(p.second[0]) for p in pulls], ""),
             (f"{label}: that second sync's time", [p.second[1] for p in pulls], "s"),
             (f"{label}: memories that second sync pulled", [float(p.second[2]) for p in pulls], ""),
             (f"{label}: first vector, after the rows (loading the model, first batch)",
              [p.first_vector for p in pulls], "s"),
             (f"{label}: embedding rate (memories/s, first vector to the last seen)", [p.rate for p in pulls], "")]
    rows.append((f"{label}: all searchable by meaning" + (
        f" (EXTRAPOLATED from the first {args.embed_sample} at the rate above)" if guessed else " (measured)"),
        [m for m, _ in meaning], "s"))
    if all(not math.isnan(p.vectors_kib) for p in pulls):
        rows += [(f"{label}: the ref's size on the remote", [p.ref_kib for p in pulls], "KiB"),
                 (f"{label}: the ref's size with vectors in the records", [p.vectors_kib for p in pulls], "KiB"),
                 (f"{label}: plain git fetch of the ref with vectors in the records",
                  [p.fetch_vectors for p in pulls], "s")]
