"""Learned rules in-process: thatch's default behaviors (added once, never
twice, never beside the original's, never over its rows), and auto-fire
decisions with the real MiniLM and a model whose scores are squeezed high
(the same prompts fire the same rules: the threshold is on the calibrated scale)."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

from thatch_cli.ops import rules
from thatch_cli.ops.context import Context
from thatch_cli.ops.rules_admin import every, forget
from thatch_cli.ops.rules_seed import DEFAULTS, seed
from thatch_cli.storage.rules import BEHAVIORS, PREDICTIONS, ensure_tables

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ctx(isolated_env, tmp_path):
    env = {**os.environ, "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0", "THATCH_STORE": "acme/widget"}
    with Context(env=env, cwd=tmp_path) as ctx:
        yield ctx


def defaults(ctx) -> list[str]:
    return sorted(r["rationale"].split("thatch-default:")[1] for r in every(ctx, "global", "behavior")
                  if "thatch-default:" in (r["rationale"] or ""))


def test_the_defaults_are_added_once_and_a_forgotten_one_stays_gone(ctx):
    assert sorted(seed(ctx)) == sorted(DEFAULTS)
    assert defaults(ctx) == sorted(DEFAULTS) and seed(ctx) == []
    wrap_up = next(r for r in every(ctx, "global", "behavior") if "thatch-default:wrap-up" in r["rationale"])
    forget(ctx, wrap_up["id"])
    assert seed(ctx) == [] and "wrap-up" not in defaults(ctx)


def original_default(conn) -> tuple:
    ensure_tables(conn)
    conn.execute("INSERT OR IGNORE INTO stores (name) VALUES ('global')")
    conn.execute("INSERT INTO behavior_matchers (id, store, description, embedding, model) VALUES"
                 " ('m1', 'global', 'the user is wrapping up', NULL, 'Xenova/bge-small-en-v1.5')")
    conn.execute("INSERT INTO behaviors (id, store, statement, rationale, embedding, model, confidence,"
                 " confirm_count, disconfirm_count, created_at, updated_at) VALUES ('b1', 'global', 'check loose"
                 " ends', 'asked often seed-key:session-wrap-up seed-version:0.9.0', NULL,"
                 " 'Xenova/bge-small-en-v1.5', 0.5, 0, 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')")
    conn.execute("INSERT INTO behavior_edges (matcher_id, behavior_id, weight) VALUES ('m1', 'b1', 1.0)")
    return conn.execute("SELECT * FROM behaviors WHERE id = 'b1'").fetchone()


def test_no_second_set_beside_the_originals_defaults_and_its_rows_untouched(ctx):
    with ctx.db().transaction() as conn:
        before = original_default(conn)
    assert seed(ctx) == [] and defaults(ctx) == []
    assert ctx.db().conn.execute("SELECT * FROM behaviors WHERE id = 'b1'").fetchone() == before


def test_ours_give_way_when_the_original_seeds_later_unless_graded(ctx):
    seed(ctx)
    graded = rules.feedback(ctx, DEFAULTS["debugging"][1], True, "a flaky test", "global")
    with ctx.db().transaction() as conn:
        original_default(conn)  # the original's server started on this file after ours seeded
    assert seed(ctx) == []
    assert defaults(ctx) == ["debugging"] and {r["id"] for r in every(ctx, "global", "behavior")} == {graded["id"], "b1"}
    left = ctx.db().conn.execute("SELECT count(*) FROM behavior_matchers WHERE store = 'global'").fetchone()[0]
    assert left == len(DEFAULTS["debugging"][0]) + 1  # the others' situations went with them


# -- real models ---------------------------------------------------------------------------------------------

PROMPTS = {
    "ok, I'm done for today, anything left over before I sign off?": "wrap-up",
    "let's merge this branch and close the ticket": "before-merge",
    "the login test used to pass and now it fails, no idea why": "debugging",
    "continuing from yesterday, where was I?": "resume-work",
    "banana bread recipe with walnuts": None,
    "who won the 1998 world cup final": None,
}


@pytest.fixture(scope="module")
def squeezed(minilm_path, tmp_path_factory) -> str:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from models import build_compressed
    finally:
        sys.path.remove(str(ROOT / "bench"))  # bench scripts stay off sys.path for later tests

    return str(build_compressed(minilm_path, tmp_path_factory.mktemp("models") / "all-MiniLM-L6-v2-compressed"))


def decisions(model: str, env: dict, tmp: Path) -> dict:
    """prompt -> the default behaviors it fires (as the hook scores them), and what one preference fires."""
    env = {**env, "THATCH_DB": str(tmp / f"{abs(hash(model))}.db"), "THATCH_STORE": "acme/widget",
           "THATCH_DAEMON": "0", "THATCH_MODEL": model}
    with Context(env=env, cwd=tmp) as ctx:
        seed(ctx)
        rules.record(ctx, PREDICTIONS, "choosing how to format Python code", "use ruff format, not black",
                     "confirm", "the user said so")
        keys = {r["statement"]: key for key, r in ((k, {"statement": v[1]}) for k, v in DEFAULTS.items())}
        found = {}
        for prompt in [*PROMPTS, "which formatter should this Python project use?"]:
            embedded = ctx.engine().embed_query(prompt)
            space = rules.space_of(ctx, embedded.model, embedded.dim)
            fired = rules.scored(ctx.db().conn, BEHAVIORS, space, embedded.blobs[0], ["acme/widget", "global"],
                                 rules.MATCH_THRESHOLD)
            preferences = rules.scored(ctx.db().conn, PREDICTIONS, space, embedded.blobs[0],
                                       ["acme/widget", "global"], rules.MATCH_THRESHOLD)
            found[prompt] = ([keys.get(f["statement"]) for f in fired], [p["statement"] for p in preferences])
    return found


@pytest.mark.model
def test_minilm_and_a_squeezed_model_fire_the_same_rules(minilm_path, squeezed, isolated_env, tmp_path):
    env = {**os.environ, **isolated_env}
    reference = decisions(minilm_path, env, tmp_path)
    for prompt, key in PROMPTS.items():
        if key is None:
            assert reference[prompt] == ([], []), prompt
        else:
            assert reference[prompt][0][:1] == [key], (prompt, reference[prompt])
    assert reference["which formatter should this Python project use?"][1] == ["use ruff format, not black"]
    assert decisions(squeezed, env, tmp_path) == reference
    conn = sqlite3.connect(tmp_path / f"{abs(hash(squeezed))}.db")
    assert conn.execute("SELECT count(*) FROM behaviors").fetchone() == (len(DEFAULTS),)


def test_export_and_import_carry_rules_with_their_history(ctx, tmp_path):
    from thatch_cli.ops.transfer import export_to_file, import_lines

    seed(ctx)
    made = rules.record(ctx, PREDICTIONS, "choosing a test runner", "use pytest", "confirm", "the user said so")
    rules.record(ctx, PREDICTIONS, "choosing a test runner", "use pytest", "soft", "not for the benchmarks")
    out = export_to_file(ctx, str(tmp_path / "all.jsonl"), None, with_vectors=False)
    assert out.rules == len(DEFAULTS) + 1
    other = {**ctx.env, "THATCH_DB": str(tmp_path / "other.db")}
    with Context(env=other, cwd=tmp_path) as fresh:
        lines = (tmp_path / "all.jsonl").read_text().splitlines()
        assert import_lines(fresh, lines).rules == len(DEFAULTS) + 1
        again = import_lines(fresh, lines)
        assert again.rules == 0 and again.error_count == 0
        copied = next(r for r in every(fresh, "acme/widget") if r["id"] == made["id"])
        assert (copied["confidence"], copied["confirm_count"], copied["disconfirm_count"]) == (
            round((1 + 2.5) / (1 + 0.25 + 5), 3), 1, 0.25)
        assert [p["signal"] for p in rules.listing(fresh, PREDICTIONS, ["acme/widget"])[0]["provenance"]] == [
            "soft", "confirm"]
        # Without vectors, the imported rule is embedded when next compared: the query still finds it.
        assert [r["statement"] for r in rules.query(fresh, "choosing a test runner")] == ["use pytest"]
        bad = import_lines(fresh, ['{"_record": "rule", "kind": "spell", "id": "x", "statement": "y"}',
                                   '{"_record": "rule", "kind": "behavior", "id": "z", "statement": "",'
                                   ' "matchers": []}'])
        assert bad.error_count == 2 and bad.rules == 0
