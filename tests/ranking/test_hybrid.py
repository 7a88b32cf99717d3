"""Hybrid recall: fusion arithmetic, query handling that never errors,
identifiers found by their exact spelling, ranking modes, the score
breakdown and the output budget."""

import json

import pytest

from thatch_cli.memory.records import Hit
from thatch_cli.ranking.fusion import alone, fuse
from thatch_cli.ranking.lexical import MAX_TERMS, fts_query, terms
from thatch_cli.storage.memories import MemoryDB

from helpers import BrokenEmbedder


def lexical_hits(db, stores, query, *, branch, include_archived, limit):
    """The keyword ranking alone (ranking/lexical.py)."""
    from thatch_cli.memory.filter import Filter
    from thatch_cli.ranking import lexical

    return lexical.rank(db, Filter(stores, branch=branch, archived=include_archived), query, limit=limit,
                        weigh=False)[0]


def run_json(cli, *args, **kwargs):
    result = cli(args[0], "--json", *args[1:], **kwargs)  # before any "--"
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return json.loads(result.stdout)


def slugs(data):
    return [r["slug"] for r in data["results"]]


# -- fusion ------------------------------------------------------------------------


def H(slug, score, kind="semantic"):
    return Hit("s", slug, score, kind)


def test_fuse_combines_the_two_scales_as_independent_evidence():
    dense = [H("a", 0.9), H("b", 0.5), H("c", -0.1)]
    lexical = [H("c", 6.0, "lexical"), H("b", 1.5, "lexical")]
    ranked = fuse(dense, lexical, query_weight=3.0)
    scores = {r.key[1]: r.score for r in ranked}
    assert scores["a"] == pytest.approx(0.9)  # meaning alone: the cosine itself
    assert scores["b"] == pytest.approx(1 - (1 - 0.5) * (1 - 0.8 * 0.5))  # half the query's words, and meaning
    assert scores["c"] == pytest.approx(0.8)  # a full word match (capped) alone; a negative cosine counts 0
    b = next(r for r in ranked if r.key[1] == "b")
    assert (b.dense, b.dense_rank, b.lexical, b.lexical_rank, b.match) == (0.5, 2, 1.5, 2, "both")
    assert [r.key[1] for r in ranked] == ["a", "c", "b"]
    assert all(0 <= r.score <= 1 for r in ranked)


def test_hybrid_order_adds_how_far_a_memory_stands_out_in_each_ranking():
    """The order is the score plus a tenth of the memory's z-scores in the two
    rankings (CombSUM); the 0-1 score itself stays as it was. Here "a" means
    something (0.46) and is the best keyword match by far: it comes first,
    ahead of two paraphrases that score a little higher on meaning alone."""
    import statistics

    meaning = {"f": 0.68, "b": 0.67, "e": 0.59, "c": 0.50, "a": 0.46, "d": 0.23}
    bm25 = {"a": 3.1, "c": 1.3}
    ranked = fuse([H(k, v) for k, v in meaning.items()], [H(k, v, "lexical") for k, v in bm25.items()],
                  query_weight=8.0)
    scores = {r.key[1]: r.score for r in ranked}
    words = {k: 0.8 * bm25.get(k, 0) / 8.0 for k in meaning}
    assert scores == pytest.approx({k: 1 - (1 - meaning[k]) * (1 - words[k]) for k in meaning})
    assert scores["f"] > scores["a"]

    def z(values):
        mean, spread = statistics.fmean(values.values()), max(statistics.pstdev(values.values()), 0.1)
        return {k: (v - mean) / spread for k, v in values.items()}

    standing, wording = z(meaning), z(words)
    expected = sorted(meaning, key=lambda k: -(scores[k] + 0.1 * (standing[k] + wording[k])))
    assert [r.key[1] for r in ranked] == expected and expected[0] == "a"


def test_in_a_small_store_a_lone_weak_keyword_match_does_not_jump_a_clear_paraphrase():
    dense = [H("release", 0.38), H("style", 0.16), H("onboarding", 0.096), H("logging", 0.05)]
    ranked = fuse(dense, [H("onboarding", 1.27, "lexical")], query_weight=9.6)
    assert ranked[0].key[1] == "release"


def test_scores_do_not_depend_on_the_other_memories():
    """An absolute scale: a memory's score is the same alone or among
    others, so a floor means the same in a store of one."""
    alone_in_store = fuse([H("x", 0.2)], [], 0.0)
    among_others = fuse([H("y", 0.7), H("x", 0.2), H("z", -0.3)], [], 0.0)
    assert alone_in_store[0].score == pytest.approx(0.2)
    assert next(r for r in among_others if r.key[1] == "x").score == pytest.approx(0.2)


def test_fuse_does_not_give_a_lone_weak_keyword_match_full_marks():
    # The only lexical hit shares one common word with a long query:
    # against the query's full weight it scores low, the semantic best stays first.
    dense = [H("release", 0.38), H("onboarding", 0.10)]
    ranked = fuse(dense, [H("onboarding", 1.3, "lexical")], query_weight=9.0)
    assert [r.key[1] for r in ranked] == ["release", "onboarding"]
    assert ranked[1].score < 0.3


def test_fuse_with_one_ranking_empty():
    only_words = fuse([], [H("x", 2.0, "lexical")], 4.0)
    assert [(r.key[1], r.score) for r in only_words] == [("x", pytest.approx(0.4))]
    # Without a query weight the best bm25 counts as a full match.
    assert fuse([], [H("x", 2.0, "lexical")], 0.0)[0].score == pytest.approx(0.8)
    assert fuse([], [], 0.0) == []


def test_alone_keeps_the_rankers_own_order_and_scores():
    ranked = alone([H("b", 0.8), H("a", 0.8)], "semantic")
    assert [(r.key[1], r.score, r.dense_rank, r.lexical_rank) for r in ranked] == [
        ("b", 0.8, 1, None), ("a", 0.8, 2, None)]


# -- turning text into an FTS5 query -------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ('"foo" OR bar*(', ["foo", "bar"]),
    ("C++ -> std::move", ["std move", "c", "std", "move"]),
    ("what is the port?", ["port"]),
    ("what is it", ["what", "is", "it"]),  # only function words: keep them
    ("thatch_cli/db.py", ["thatch cli db py", "thatch", "cli", "db", "py"]),
    ("ERR_CONN_RESET twice", ["err conn reset", "err", "conn", "reset", "twice"]),
    ("Naïve CAFÉ", ["naïve", "café"]),
])
def test_terms(text, expected):
    assert terms(text) == expected


def test_fts_query_quotes_every_term_and_caps_them():
    assert fts_query('say "hi"') == '"say" OR "hi"'
    assert fts_query("-> ::: !!!") is None
    assert len(terms(" ".join(f"word{i}" for i in range(500)))) == MAX_TERMS


NASTY = [
    '"foo" OR bar*(', "C++ -> std::move", "NEAR(a b, 3)", "label:content", "^start", "a AND", '"', "*", "'",
    "-x", "{label content}: x", "(((", "x OR OR y", "naïve café 🎉", "->", "\\", "%_", "AND OR NOT",
]


@pytest.fixture
def notes(cli):
    for label, body in (
        ("DB module", "Connection setup lives in thatch_cli/db.py, next to the schema migrations."),
        ("Reset errors", "The proxy drops idle sockets: ERR_CONN_RESET means retry with backoff."),
        ("Hook bypass", "Never commit with --no-verify; the pre-commit hook runs the linters."),
        ("Move semantics", "Return locals by value; an explicit std::move there blocks copy elision."),
        ("Pinned torch", "Install torch==2.13.0 first so pip takes the CPU wheel."),
        ("Branch naming", "Feature branches are named fix-login-redirect style, lowercase with dashes."),
        ("Python modules", "Each python module holds one concern; db helpers stay small."),
    ):
        cli("remember", label, body, "--store", "s")


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "semantic"])
def test_punctuation_and_fts_syntax_never_error(cli, notes, mode):
    for query in NASTY:
        result = cli("recall", "--store", "s", "--mode", mode, "--json", "--", query)
        assert result.exit_code == 0, (query, result.output)
        json.loads(result.stdout)


@pytest.mark.parametrize("query, slug", [
    ("thatch_cli/db.py", "db-module"),
    ("ERR_CONN_RESET", "reset-errors"),
    ("--no-verify", "hook-bypass"),
    ("std::move", "move-semantics"),
    ("torch==2.13.0", "pinned-torch"),
    ("fix-login-redirect", "branch-naming"),
])
def test_identifiers_are_found_by_their_spelling(cli, notes, query, slug):
    assert slugs(run_json(cli, "recall", "--store", "s", "--mode", "lexical", "--", query))[0] == slug


def test_exact_phrase_outranks_the_same_words_scattered(cli, notes):
    # "db" and "py"/"python" words appear in "Python modules" too; the
    # identifier as written is in "DB module" only.
    found = slugs(run_json(cli, "recall", "thatch_cli/db.py", "--store", "s", "--mode", "lexical", "--floor", "0"))
    assert found.index("db-module") < found.index("python-modules")


# -- modes and the score breakdown ---------------------------------------------------


def test_modes_and_breakdown(cli, notes):
    hybrid = run_json(cli, "recall", "ERR_CONN_RESET retry", "--store", "s")
    assert hybrid["mode"] == "hybrid" and hybrid["budget"] is None
    top = hybrid["results"][0]
    assert top["slug"] == "reset-errors" and top["match"] == "both"
    assert top["score"] == top["scores"]["fused"]
    assert top["scores"]["dense_rank"] >= 1 and top["scores"]["lexical_rank"] == 1
    assert [r["score"] for r in hybrid["results"]] == sorted((r["score"] for r in hybrid["results"]), reverse=True)

    semantic = run_json(cli, "recall", "ERR_CONN_RESET retry", "--store", "s", "--mode", "semantic")
    assert semantic["mode"] == "semantic"
    assert all(r["scores"]["lexical"] is None and r["scores"]["fused"] is None for r in semantic["results"])
    assert [r["scores"]["dense_rank"] for r in semantic["results"]] == list(range(1, len(semantic["results"]) + 1))
    assert all(r["score"] == r["scores"]["dense"] for r in semantic["results"])

    lexical = run_json(cli, "recall", "ERR_CONN_RESET retry", "--store", "s", "--mode", "LEXICAL")
    assert lexical["mode"] == "lexical" and slugs(lexical) == ["reset-errors"]
    assert lexical["results"][0]["scores"]["dense"] is None and lexical["results"][0]["match"] == "lexical"


def test_bad_mode_is_a_one_line_usage_error(cli, notes):
    result = cli("recall", "x", "--mode", "fuzzy")
    assert result.exit_code == 2 and "mode must be one of hybrid, semantic, lexical" in result.stderr
    assert "Traceback" not in result.output


def test_every_mode_degrades_to_keywords_without_a_model(cli, notes):
    for mode in ("hybrid", "semantic"):
        data = run_json(cli, "recall", "ERR_CONN_RESET", "--store", "s", "--mode", mode, embedder=BrokenEmbedder())
        assert data["mode"] == "lexical" and slugs(data) == ["reset-errors"]
        assert any("semantic search unavailable" in n for n in data["notices"])


def test_hybrid_respects_scope_branch_and_archive_on_both_rankers(cli, isolated_env):
    cli("remember", "wip", "Parser rewrite uses pratt parsing", "--store", "s", "--branch", "feat/parser")
    cli("remember", "old", "Old parser used pratt parsing too", "--store", "s", "--archived")
    cli("remember", "other", "Another project's pratt parsing notes", "--store", "t")
    cli("remember", "main", "Pratt parsing background reading list", "--store", "s")
    assert slugs(run_json(cli, "recall", "pratt parsing", "--store", "s")) == ["main"]
    assert set(slugs(run_json(cli, "recall", "pratt parsing", "--store", "s", "--branch", "feat/parser"))) == {
        "main", "wip"}
    assert "old" in slugs(run_json(cli, "recall", "pratt parsing", "--store", "s", "--include-archived"))
    assert slugs(run_json(cli, "recall", "pratt parsing", "--store", "t")) == ["other"]


# -- the output budget ---------------------------------------------------------------


def test_budget_keeps_whole_results_best_first(cli, notes):
    query = ["recall", "db module python", "--store", "s", "--floor", "0", "--json"]
    full = cli(*query)
    everything = [_stable(r) for r in json.loads(full.stdout)["results"]]
    assert len(everything) >= 4
    for budget in (50, 400, 900, 1500, 2500, len(full.stdout) + 200):
        result = cli(*query, "--budget", str(budget))
        assert result.exit_code == 0 and len(result.stdout) <= max(budget, _envelope(result.stdout))
        assert result.stdout.count("\n") == 1 and result.stdout.endswith("}\n")  # one compact line
        data = json.loads(result.stdout)
        assert result.stdout == json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
        kept = [_stable(r) for r in data["results"]]
        assert kept == everything[: len(kept)]  # a prefix, every record whole
        assert data["budget"] == {"chars": budget, "omitted": len(everything) - len(kept)}
        if kept != everything:  # the next result really would not have fitted
            bigger = {**data, "results": data["results"] + [everything[len(kept)]]}
            assert len(json.dumps(bigger, ensure_ascii=False, separators=(",", ":"))) + 1 > budget


def test_budget_counts_weak_matches_after_the_results(cli, notes):
    query = ["recall", "db module python", "--store", "s", "--floor", "0.5", "--show-weak", "--json"]
    everything = json.loads(cli(*query).stdout)
    assert everything["results"] and everything["weak"] and everything["weak_count"] == len(everything["weak"])
    size = len(cli(*query, "--budget", "100000").stdout)
    # The whole document at a budget with as many digits as the one tried below, then one character less.
    size = len(cli(*query, "--budget", str(10 ** len(str(size)) - 1)).stdout)
    trimmed = json.loads(cli(*query, "--budget", str(size - 1)).stdout)
    assert len(trimmed["weak"]) == len(everything["weak"]) - 1 and trimmed["budget"]["omitted"] == 1
    assert [r["slug"] for r in trimmed["results"]] == [r["slug"] for r in everything["results"]]


def _stable(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "recall_count"}  # each recall stamps it


def _envelope(stdout: str) -> int:
    data = json.loads(stdout)
    return len(json.dumps({**data, "results": []}, ensure_ascii=False, separators=(",", ":"))) + 1


def test_budget_in_plain_output(cli, notes):
    full = cli("recall", "db module python", "--store", "s", "--floor", "0").stdout
    cut = cli("recall", "db module python", "--store", "s", "--floor", "0", "--budget", "300")
    assert cut.exit_code == 0 and 0 < len(cut.stdout) <= 300 and full.startswith(cut.stdout)
    assert "left out to stay within --budget 300" in cut.stderr
    assert cli("recall", "x", "--budget", "0").exit_code == 2


def test_recall_never_writes_the_database_beyond_telemetry(cli, notes, isolated_env):
    from pathlib import Path

    before = MemoryDB.open(Path(isolated_env["THATCH_DB"])).list(["s"])
    for query in NASTY:
        cli("recall", "--store", "s", "--", query)
    after = MemoryDB.open(Path(isolated_env["THATCH_DB"])).list(["s"])
    assert [(m.slug, m.content, m.updated_at) for m in before] == [(m.slug, m.content, m.updated_at) for m in after]


# -- the keyword ranking's two plans ---------------------------------------------------


def _save(db, store, slug, content, *, branch=None, archived=False):
    from thatch_cli.memory.records import Memory

    now = "2026-11-30T12:00:00.000Z"
    db.save(Memory(store=store, slug=slug, label=slug, content=content, branch=branch, created_at=now,
                   updated_at=now), overwrite=False, archived=archived or None)


def test_lexical_refills_when_the_best_matches_are_filtered_out(tmp_path):
    db = MemoryDB.open(tmp_path / "t.db")
    # 150 archived memories outrank the two live ones (the word three times),
    # so the candidates FTS5 ranks first are all filtered out.
    for i in range(150):
        _save(db, "big", f"old-{i:03d}", "parser parser parser", archived=True)
    _save(db, "big", "live-a", "the parser notes")
    _save(db, "big", "live-b", "a parser rewrite plan and more words here", branch="feat/x")
    found = lexical_hits(db, ["big"], "parser", branch=None, include_archived=False, limit=3)
    assert [h.slug for h in found] == ["live-a"]
    found = lexical_hits(db, ["big"], "parser", branch="feat/x", include_archived=False, limit=3)
    assert [h.slug for h in found] == ["live-a", "live-b"]
    assert len(lexical_hits(db, ["big"], "parser", branch=None, include_archived=True, limit=3)) == 3


def test_lexical_in_a_small_store_of_a_big_index(tmp_path):
    db = MemoryDB.open(tmp_path / "t.db")
    for i in range(40):
        _save(db, "other", f"n{i}", "deploy the service with helm")
    _save(db, "mine", "deploy", "deploy with the make target")
    _save(db, "mine", "unrelated", "coffee machine")
    both = lexical_hits(db, ["mine", "other"], "deploy", branch=None, include_archived=False, limit=100)
    assert len(both) == 41
    mine = lexical_hits(db, ["mine"], "deploy", branch=None, include_archived=False, limit=10)
    assert [h.slug for h in mine] == ["deploy"] and mine[0].score > 0
    # both plans rank the same memories the same way
    assert [h.score for h in both if h.store == "mine"] == [h.score for h in mine]
