"""Entering a repository warms the model only where recall would use it
(the store has memories with vectors) and only while the daemon.warm
setting allows; a broken settings file never breaks the prompt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from thatch_cli.hot.prompt import summarize
from thatch_cli.memory.records import Memory
from thatch_cli.storage.memories import MemoryDB
from thatch_cli.support import settings

from helpers import daemon_pids, git, stop_all


def save(isolated_env, store: str, slug: str, embedding: bytes | None) -> None:
    db = MemoryDB.open(Path(isolated_env["THATCH_DB"]))
    now = "2026-11-30T12:00:00.000Z"
    db.save(Memory(store=store, slug=slug, label=slug, content=f"# {slug}\n\nx", embedding=embedding,
                   model="fake:4" if embedding else None, created_at=now, updated_at=now),
            overwrite=False, archived=None)
    db.close()


@pytest.fixture
def repo(git_repo):
    return git_repo("widget", remote="https://example.com/acme/widget.git")


def test_warm_only_on_entering_a_store_with_vectors(isolated_env, repo):
    env = dict(isolated_env)
    save(isolated_env, "acme/widget", "words-only", None)
    state, line, warm = summarize(env, repo, "")
    assert line == "thatch: acme/widget · 1 memory" and warm is False  # nothing for the model to rank
    save(isolated_env, "acme/widget", "with-vector", b"\0" * 16)
    assert summarize(env, repo, "")[2] is True
    assert summarize(env, repo, "elsewhere\tmain")[2] is True  # entered from another repository
    assert summarize(env, repo, state)[2] is False  # nothing changed
    git(repo, "switch", "-qc", "feat/x")
    assert summarize(env, repo, state)[2] is False  # a branch switch inside it: already warm
    assert summarize(env, repo.parent, "")[2] is False  # not a repository


def test_the_warm_setting_stops_the_spawn(isolated_env):
    from thatch_cli.daemon.warm import maybe_warm

    env = {**os.environ, "THATCH_DAEMON": "", "THATCH_MODEL": "fake:16"}
    try:
        maybe_warm({**env, "THATCH_WARM": "0"})
        path = settings.path(env)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("[daemon]\nwarm = false\n")
        maybe_warm(env)
        assert daemon_pids(env) == []
        path.write_text("[daemon]\nwarm = true\nenabled = false\n")
        maybe_warm(env)
        assert daemon_pids(env) == []
    finally:
        stop_all(env)


def test_a_broken_settings_file_does_not_break_the_prompt(isolated_env, repo):
    save(isolated_env, "acme/widget", "note", None)
    path = settings.path(isolated_env)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[daemon\nwarm = 3\n")
    result = subprocess.run([sys.executable, "-m", "thatch_cli", "_hook", "prompt"], cwd=repo, env=os.environ,
                            capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.splitlines()[1] == "thatch: acme/widget · 1 memory"


def test_init_help_says_what_warming_costs(cli):
    text = " ".join(cli("init", "--help").stdout.split())
    assert "background model process (about 500 MB of memory" in text
    assert "thatch config set daemon.warm false" in text


def test_warming_never_fingerprints_a_model_folder(isolated_env, tmp_path, monkeypatch):
    """A model folder not seen before would be hashed (hundreds of MB) to
    name it: the prompt leaves that to the daemon it starts."""
    from thatch_cli.daemon import runtime, warm
    from thatch_cli.model import identity as model_identity

    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\0" * 1024)
    hashed, spawned = [], []
    monkeypatch.setattr(model_identity, "_fingerprint", lambda *a: hashed.append(a) or "x")
    monkeypatch.setattr(runtime, "spawn", lambda env, rundir: spawned.append(rundir) or 0)
    warm.maybe_warm({**os.environ, "THATCH_DAEMON": "", "THATCH_MODEL": str(folder)})
    assert hashed == [] and len(spawned) == 1
