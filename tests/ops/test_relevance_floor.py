"""Honest recall: one 0-1 score scale in every mode, a relevance floor that
answers an unrelated query with nothing (and stamps nothing), weak matches
on request, and query words without quotes. Through the real command."""

from __future__ import annotations

import json
import os

import pytest

from thatch_cli.model import embeddings
from thatch_cli.storage.memories import MemoryDB

from helpers import stop_all, thatch_process

NOTES = {
    "Staging database port": "The staging Postgres listens on port 5432 on db-staging.internal.",
    "Release process": "Tag the commit, build the wheel and upload it to PyPI with twine.",
    "Lint command": "Lint with ruff check and format with ruff format before committing.",
    "Flaky websocket test": "test_websocket_reconnect is flaky on CI because it depends on wall-clock timeouts.",
}


@pytest.fixture
def store(cli):
    for label, body in NOTES.items():
        assert cli("remember", label, body, "--store", "s").exit_code == 0


def recall_json(cli, *args, **env):
    result = cli("recall", *args, "--store", "s", "--json", **env)
    assert result.exit_code == 0, result.output
    return result.json()


def recall_counts(isolated_env) -> dict[str, int]:
    from pathlib import Path

    db = MemoryDB.open(Path(isolated_env["THATCH_DB"]))
    try:
        return {m.slug: m.recall_count for m in db.list(["s"])}
    finally:
        db.close()


def test_an_unrelated_query_answers_nothing_and_stamps_nothing(cli, store, isolated_env):
    data = recall_json(cli, "banana", "bread", "recipe")
    assert data["results"] == [] and data["floor"] == 0.35
    assert data["weak_count"] >= 1 and data["weak"] is None  # weak matches exist, not asked for
    plain = cli("recall", "banana", "bread", "recipe", "--store", "s")
    assert plain.stdout == "" and "no memories match well enough in s" in plain.stderr
    assert "below the floor 0.35 left out (--show-weak lists them)" in plain.stderr
    assert set(recall_counts(isolated_env).values()) == {0}


def test_weak_matches_on_request_stay_apart_and_unstamped(cli, store, isolated_env):
    data = recall_json(cli, "banana", "bread", "recipe", "--show-weak")
    assert data["results"] == [] and len(data["weak"]) == data["weak_count"] >= 1
    assert all(w["score"] < 0.35 for w in data["weak"])
    plain = cli("recall", "banana", "bread", "recipe", "--store", "s", "--show-weak")
    lines = plain.stdout.splitlines()
    assert lines and all(float(line.split("\t")[0]) < 0.35 for line in lines)  # only weak ones, one per line
    assert f"the last {len(lines)} line" in plain.stderr and "below the floor 0.35" in plain.stderr
    assert set(recall_counts(isolated_env).values()) == {0}


def test_a_relevant_query_passes_the_floor_and_is_stamped(cli, store, isolated_env):
    data = recall_json(cli, "staging", "postgres", "port")
    assert data["results"][0]["slug"] == "staging-database-port" and data["results"][0]["score"] >= 0.3
    counts = recall_counts(isolated_env)
    assert counts["staging-database-port"] == 1
    assert sum(counts.values()) == len(data["results"])  # only what was shown


def test_the_floor_is_configurable(cli, store):
    assert len(recall_json(cli, "banana", "bread", "recipe", "--floor", "0")["results"]) == len(NOTES)
    cli("config", "set", "recall.floor", "0")
    assert len(recall_json(cli, "banana", "bread", "recipe")["results"]) == len(NOTES)
    assert recall_json(cli, "banana", "bread", "recipe", THATCH_RECALL_FLOOR="0.3")["results"] == []
    high = recall_json(cli, "staging", "postgres", "port", "--floor", "1")
    assert high["results"] == [] and high["floor"] == 1.0
    bad = cli("recall", "x", "--floor", "1.5")
    assert bad.exit_code == 2 and "--floor must be between 0 and 1, got 1.5" in bad.stderr


def test_library_search_takes_a_floor(make_ctx, cli, store):
    from thatch_cli.ops.recall import peek

    ctx = make_ctx()
    assert peek(ctx, "banana bread recipe", store="s").results == []
    everything = peek(ctx, "banana bread recipe", store="s", floor=0)
    assert len(everything.results) == len(NOTES) and everything.weak == []


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "lexical"])
def test_scores_are_on_one_0_to_1_scale_in_every_mode(cli, store, mode):
    data = recall_json(cli, "ruff", "check", "format", "lint", "--mode", mode, "--floor", "0")
    scores = [r["score"] for r in data["results"]]
    assert scores and all(0 <= s <= 1 for s in scores)
    if mode != "hybrid":  # hybrid orders by score and standing (ranking/fusion.py)
        assert scores == sorted(scores, reverse=True)
    top = data["results"][0]
    assert top["slug"] == "lint-command" and top["score"] >= 0.3
    if mode == "lexical":  # bm25 stays in the breakdown, the score is on the scale
        assert top["scores"]["lexical"] > 1 and top["score"] == pytest.approx(0.8)


def test_query_words_need_no_quotes(cli, store):
    quoted = recall_json(cli, "staging db port")
    for fastpath in ("1", "0"):
        words = recall_json(cli, "staging", "db", "port", THATCH_FASTPATH=fastpath)
        assert words["query"] == "staging db port"
        assert [_unstamped(r) for r in words["results"]] == [_unstamped(r) for r in quoted["results"]]
    after_options = cli("recall", "--store", "s", "--json", "--", "-x", "port").json()
    assert after_options["query"] == "-x port"
    missing = cli("recall", "--store", "s")
    assert missing.exit_code == 2 and missing.stderr.count("\n") == 1 and "QUERY" in missing.stderr


def _unstamped(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "recall_count"}  # each recall stamps it


@pytest.mark.model
def test_the_readme_example_end_to_end_with_the_model_from_the_settings(isolated_env, tmp_path, minilm_path):
    """A new terminal with no THATCH_MODEL: the model comes from the settings
    file, the daemon starts with it, the README's question finds its note by
    meaning, and an unrelated question finds nothing and stamps nothing."""
    env = {k: v for k, v in os.environ.items() if k not in ("THATCH_MODEL", "THATCH_DAEMON")}
    env["THATCH_STORE"] = "s"

    def run(*args):
        result = thatch_process(list(args), env=env, cwd=tmp_path, timeout=120)
        assert result.returncode == 0, result.stderr
        return result

    try:
        run("config", "set", "model", minilm_path)
        run("remember", "Release process", "Tag the commit, build the wheel and upload it to PyPI with twine.")
        found = json.loads(run("recall", "how", "do", "I", "publish", "a", "new", "version?", "--json").stdout)
        assert found["mode"] == "hybrid" and found["notices"] == []
        assert [r["slug"] for r in found["results"]] == ["release-process"]
        assert found["results"][0]["match"] == "semantic" and found["results"][0]["score"] >= 0.3
        unrelated = json.loads(run("recall", "banana", "bread", "recipe", "--json").stdout)
        assert unrelated["results"] == [] and unrelated["weak_count"] == 1
        status = json.loads(run("daemon", "status", "--json").stdout)
        identity = embeddings.model_identity(minilm_path, os.environ)
        assert status["running"] and status["model"] == identity
        shown = json.loads(run("show", "Release process", "--json").stdout)["memory"]
        assert shown["recall_count"] == 1 and shown["model"] == identity
    finally:
        stop_all(env)



def test_reindex_reports_progress_in_small_steps(make_ctx, isolated_env):
    """The progress bar moves every STEP memories, not once per big batch."""
    from thatch_cli.cli.progress import STEP
    from thatch_cli.ops.reindex import reindex
    from thatch_cli.ops.remember import remember

    from helpers import BrokenEmbedder

    offline = make_ctx(embedder=BrokenEmbedder())
    for i in range(70):
        remember(offline, f"note number {i}", f"n{i}", store="s")
    seen = []
    outcome = reindex(make_ctx(), "s", progress=lambda done, total: seen.append((done, total)), batch=STEP)
    assert outcome.embedded == 70 and STEP == 32
    assert seen == [(0, 70), (32, 70), (64, 70), (70, 70)]
