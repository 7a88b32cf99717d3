"""The team bench/sync.py and bench/bigpull.py measure: clones of one bare
repository, each with its own database, home and git identity, driven by
whole `thatch` processes (`python -m thatch_cli`)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

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
