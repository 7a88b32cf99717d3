"""A team: one bare repository and clones of it, each with its own thatch
database and git identity, driven through the real entry point."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from thatch_cli.model.embeddings import FakeEmbedder
from thatch_cli.ops.context import Context
from thatch_cli.support.clock import system_clock

from helpers import Result, git, run_main


class Clone:
    def __init__(self, name: str, path: Path, db: Path, remote: Path) -> None:
        self.name, self.path, self.db, self.remote = name, path, db, remote
        self.env = {**os.environ, "THATCH_DB": str(db), "GIT_COMMITTER_NAME": name.capitalize(),
                    "GIT_COMMITTER_EMAIL": f"{name}@example.com", "GIT_AUTHOR_NAME": name.capitalize(),
                    "GIT_AUTHOR_EMAIL": f"{name}@example.com",
                    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
        self.identity = f"{name.capitalize()} <{name}@example.com>"
        self.clock: Callable[[], datetime] = system_clock

    def at(self, moment: datetime) -> Clone:
        """Set this machine's clock (every later command reads it)."""
        self.clock = lambda: moment
        return self

    def ctx(self, **env: str) -> Context:
        embedder = FakeEmbedder(64)
        return Context(env={**self.env, **env}, cwd=self.path, clock=self.clock,
                       embedder_factory=lambda _env: embedder)

    def run(self, *args: str, input: str | None = None, **env: str) -> Result:
        return run_main(args, self.ctx(**env), input=input)

    def ok(self, *args: str, **env: str) -> Result:
        result = self.run(*args, **env)
        assert result.exit_code == 0, result
        return result

    def sync(self, *args: str, **env: str) -> dict:
        result = self.run("sync", *args, "--json", **env)
        assert result.exit_code in (0, 5), result
        return result.json()

    def git(self, *args: str) -> str:
        return git(self.path, *args)

    def push_file(self, name: str, text: str) -> None:
        """Commit `name` with `text` and push it to the remote's main (code for anchors to point at)."""
        (self.path / name).write_text(text)
        self.git("add", name)
        self.git("commit", "-qm", name)
        self.git("push", "-q", "origin", "HEAD:main")

    def labels(self) -> list[str]:
        return sorted(m["label"] for m in self.ok("list", "--json").json()["memories"])

    def memory(self, label: str) -> dict | None:
        result = self.run("show", label, "--json")
        return result.json()["memory"] if result.exit_code == 0 else None


@pytest.fixture
def team(tmp_path) -> Callable[..., list[Clone]]:
    """`team(n)`: n clones of one bare repository, sync set up in each
    (`init=False` leaves that to the test)."""

    def make(n: int = 2, *, init: bool = True, names: tuple[str, ...] = ("ann", "bob", "cat", "dan")) -> list[Clone]:
        bare = tmp_path / "team.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
        seed = tmp_path / "seed"
        git(tmp_path, "clone", "-q", str(bare), str(seed))
        (seed / "README").write_text("hello\n")
        git(seed, "add", "README")
        git(seed, "commit", "-qm", "init")
        git(seed, "push", "-q", "origin", "HEAD:main")
        clones = []
        for name in names[:n]:
            path = tmp_path / name
            git(tmp_path, "clone", "-q", str(bare), str(path))
            clone = Clone(name, path, tmp_path / f"{name}.db", bare)
            if init:
                clone.ok("sync", "init", "--yes")
            clones.append(clone)
        return clones

    return make
