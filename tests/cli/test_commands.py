"""Every command and option through the CLI, against real SQLite files."""

import json

import pytest

from thatch_cli.model.embeddings import FakeEmbedder
from thatch_cli.storage import maintenance
from thatch_cli.storage.memories import MemoryDB

from helpers import BrokenEmbedder, git


def run_json(cli, *args, **kwargs):
    result = cli(*args, "--json", **kwargs)
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def db(isolated_env):
    return MemoryDB.open(__import__("pathlib").Path(isolated_env["THATCH_DB"]))


@pytest.fixture
def repo(git_repo):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


# -- remember --------------------------------------------------------------------


def test_remember_in_repo_uses_owner_repo_store(cli, repo, isolated_env):
    code, data = run_json(cli, "remember", "Build steps", "Run make release", cwd=repo)
    assert code == 0
    assert data["status"] == "created"
    assert data["memory"]["store"] == "acme/widget"
    assert data["memory"]["slug"] == "build-steps"
    assert data["memory"]["content"] == "Run make release"
    assert data["has_vector"] is True and data["memory"]["model"] == "fake:64"
    stored = db(isolated_env).get("acme/widget", "build-steps", with_vector=True)
    assert stored.content == "# Build steps\n\nRun make release"
    assert len(stored.embedding) == 64 * 4


def test_store_override_env_and_option(cli, repo):
    assert run_json(cli, "remember", "a", "x", cwd=repo, THATCH_STORE="team/notes")[1]["memory"]["store"] == "team/notes"
    assert run_json(cli, "remember", "b", "x", "--store", "global", cwd=repo)[1]["memory"]["store"] == "global"


def test_label_derived_from_heading_or_first_line(cli):
    code, data = run_json(cli, "remember", "# Deploy checklist\n\n1. tag\n2. push")
    assert data["memory"]["label"] == "Deploy checklist"
    assert data["memory"]["content"] == "1. tag\n2. push"
    code, data = run_json(cli, "remember", "\nuse uv for installs\nbecause it is fast")
    assert data["memory"]["label"] == "use uv for installs"


def test_content_from_stdin(cli):
    result = cli("remember", "From stdin", "-", "--json", input="piped body\n")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["memory"]["content"] == "piped body\n"


def test_existing_label_is_an_error_and_changes_nothing(cli, isolated_env):
    cli("remember", "Build Steps", "first")
    result = cli("remember", "build steps!", "second")
    assert result.exit_code == 4
    assert "already exists" in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
    memories = db(isolated_env).list(None, archived=None)
    assert [m.content for m in memories] == ["# Build Steps\n\nfirst"]


def test_overwrite_replaces_keeps_history_and_clears_verdicts(cli, make_ctx, isolated_env):
    cli("remember", "note", "one", "--store", "s", "--confidence", "3", "--branch", "feat")
    store = db(isolated_env)
    maintenance.record_verdict(store, "s", "note", "other", "distinct", "2026-01-01T00:00:00.000Z")
    maintenance.record_verdict(store, "s", "x", "y", "distinct", "2026-01-01T00:00:00.000Z")
    created = store.get("s", "note").created_at
    later = make_ctx(clock=lambda: __import__("datetime").datetime(2027, 1, 1, tzinfo=__import__("datetime").timezone.utc))
    code, data = run_json(cli, "remember", "note", "two", "--store", "s", "--overwrite", ctx=later)
    assert code == 0 and data["status"] == "replaced"
    memory = store.get("s", "note")
    assert memory.content == "# note\n\ntwo"
    assert memory.created_at == created and memory.updated_at.startswith("2027-01-01")
    assert memory.branch == "feat" and memory.confidence == 3  # kept when not given
    assert maintenance.verdict_of(store, "s", "note", "other") is None
    assert maintenance.verdict_of(store, "s", "x", "y") == "distinct"


def test_archived_memory_needs_explicit_choice(cli, isolated_env):
    assert run_json(cli, "remember", "old", "record", "--store", "s", "--archived")[1]["memory"]["archived"] is True
    result = cli("remember", "old", "edit", "--store", "s", "--overwrite")
    assert result.exit_code == 4 and "--no-archived" in result.stderr
    assert db(isolated_env).get("s", "old").content == "# old\n\nrecord"
    assert run_json(cli, "remember", "old", "kept", "--store", "s", "--overwrite", "--archived")[1]["memory"]["archived"]
    code, data = run_json(cli, "remember", "old", "live", "--store", "s", "--overwrite", "--no-archived")
    assert data["memory"]["archived"] is False


def test_branch_options(cli, repo):
    git(repo, "switch", "-qc", "feat/login")
    assert run_json(cli, "remember", "a", "x", "--this-branch", cwd=repo)[1]["memory"]["branch"] == "feat/login"
    assert run_json(cli, "remember", "b", "x", "--branch", "other", cwd=repo)[1]["memory"]["branch"] == "other"
    assert cli("remember", "c", "x", "--branch", "o", "--this-branch", cwd=repo).exit_code == 2
    git(repo, "checkout", "-q", "--detach")
    result = cli("remember", "d", "x", "--this-branch", cwd=repo)
    assert result.exit_code == 2 and "detached" in result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["label", "x", "--confidence", "0"], "between 1 and 10"),
        (["label", "x", "--confidence", "11"], "between 1 and 10"),
        (["label", "   "], "content is empty"),
        (["   ", "content"], "label is empty"),
        (["label", "y" * (64 * 1024 + 1)], "limit is 65536 bytes"),
    ],
)
def test_user_mistakes_are_one_line_and_change_nothing(cli, isolated_env, args, message):
    result = cli("remember", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert db(isolated_env).list(None, archived=None) == []


def test_json_errors_are_json(cli):
    code, data = run_json(cli, "remember", "l", "x", "--confidence", "42")
    assert code == 2
    assert data["error"]["code"] == "invalid_input" and data["error"]["exit_code"] == 2


def test_near_duplicate_warning_never_blocks(cli):
    cli("remember", "sqlite wal", "We use SQLite in WAL mode for concurrent readers", "--store", "s")
    code, data = run_json(cli, "remember", "wal note", "We use SQLite in WAL mode for concurrent readers too",
                          "--store", "s")
    assert code == 0 and data["status"] == "created"
    assert [d["slug"] for d in data["similar"]] == ["sqlite-wal"]
    assert data["similar"][0]["score"] >= 0.85
    result = cli("remember", "third", "We use SQLite in WAL mode for concurrent readers", "--store", "s")
    assert result.exit_code == 0 and "similar" in result.stderr


def test_unloadable_model_saves_without_vector(cli, isolated_env):
    result = cli("remember", "offline", "written while offline", "--store", "s", embedder=BrokenEmbedder())
    assert result.exit_code == 0
    assert "without a vector" in result.stderr
    memory = db(isolated_env).get("s", "offline", with_vector=True)
    assert memory.embedding is None and memory.model is None


# -- recall ------------------------------------------------------------------------


@pytest.fixture
def seeded(cli, repo):
    cli("remember", "release", "publish the package with twine upload", cwd=repo)
    cli("remember", "editor", "prefer vim keybindings", "--store", "global", cwd=repo)
    cli("remember", "elsewhere", "publish docs to the wiki", "--store", "other/repo", cwd=repo)
    cli("remember", "login wip", "publish login form half done", "--branch", "feat/login", cwd=repo)
    cli("remember", "old release", "publish with setup.py upload", "--archived", cwd=repo)
    return repo


def _slugs(data):
    return [r["slug"] for r in data["results"]]


def test_recall_default_scope_is_repo_plus_global(cli, seeded):
    code, data = run_json(cli, "recall", "publish", "--floor", "0", cwd=seeded)
    assert code == 0 and data["mode"] == "hybrid"
    assert data["stores"] == ["acme/widget", "global"]
    assert "release" in _slugs(data) and "editor" in _slugs(data)
    assert "elsewhere" not in _slugs(data) and "login-wip" not in _slugs(data) and "old-release" not in _slugs(data)
    first = data["results"][0]
    assert set(first) >= {"score", "store", "label", "branch", "snippet", "match", "slug", "scores"}
    assert set(first["scores"]) == {"fused", "semantic", "dense", "dense_rank", "lexical", "lexical_rank"}


def test_recall_store_all_stores_branch_archived_limit(cli, seeded):
    assert _slugs(run_json(cli, "recall", "publish", "--store", "other/repo", cwd=seeded)[1]) == ["elsewhere"]
    assert "elsewhere" in _slugs(run_json(cli, "recall", "publish", "--all-stores", cwd=seeded)[1])
    assert "login-wip" in _slugs(run_json(cli, "recall", "publish", "--branch", "feat/login", cwd=seeded)[1])
    assert "old-release" in _slugs(run_json(cli, "recall", "publish", "--include-archived", cwd=seeded)[1])
    assert len(run_json(cli, "recall", "publish", "--limit", "1", cwd=seeded)[1]["results"]) == 1
    assert cli("recall", "publish", "--store", "a", "--all-stores", cwd=seeded).exit_code == 2
    assert cli("recall", "publish", "--limit", "0", cwd=seeded).exit_code == 2


def test_recall_that_finds_nothing_here_says_which_stores_match(cli, seeded, tmp_path):
    """Outside the repository (its own store, plus global) a query about the
    repository's memories names the stores that match and how to search them."""
    outside = tmp_path / "elsewhere-dir"
    outside.mkdir()
    code, data = run_json(cli, "recall", "twine", "upload", "--mode", "lexical", cwd=outside)
    assert code == 0 and data["results"] == [] and "acme/widget" not in data["stores"]
    assert data["elsewhere"] == {"acme/widget": 1}
    text = cli("recall", "twine", "upload", "--mode", "lexical", cwd=outside)
    assert text.exit_code == 0
    assert "1 match in other stores: acme/widget (1); -a (--all-stores) searches every store" in text.stderr
    # Found here, or searched everywhere: nothing to add.
    assert run_json(cli, "recall", "twine", "upload", "--mode", "lexical", cwd=seeded)[1]["elsewhere"] is None
    assert run_json(cli, "recall", "twine", "upload", "-a", "--mode", "lexical", cwd=outside)[1]["elsewhere"] is None
    assert run_json(cli, "recall", "no such words", "--mode", "lexical", cwd=outside)[1]["elsewhere"] == {}


def test_recall_includes_current_branch_only(cli, seeded):
    git(seeded, "switch", "-qc", "feat/login")
    assert "login-wip" in _slugs(run_json(cli, "recall", "login form", cwd=seeded)[1])
    git(seeded, "switch", "-qc", "feat/other")
    assert "login-wip" not in _slugs(run_json(cli, "recall", "login form", cwd=seeded)[1])


def test_recall_stamps_telemetry_search_does_not(cli, seeded, make_ctx, isolated_env):
    from thatch_cli.ops.recall import peek

    store = db(isolated_env)
    assert store.get("acme/widget", "release").recall_count == 0
    peek(make_ctx(cwd=seeded), "publish")
    assert store.get("acme/widget", "release").recall_count == 0
    data = run_json(cli, "recall", "twine", "--limit", "1", cwd=seeded)[1]
    assert _slugs(data) == ["release"]
    memory = store.get("acme/widget", "release")
    assert memory.recall_count == 1 and memory.last_recalled_at == "2026-11-30T12:00:00.123Z"
    assert store.get("global", "editor").recall_count == 0


def test_recall_falls_back_to_keywords_without_a_model(cli, seeded):
    result = cli("recall", "twine", "--json", cwd=seeded, embedder=BrokenEmbedder())
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["mode"] == "lexical"
    assert _slugs(data) == ["release"]
    assert any("semantic search unavailable" in n for n in data["notices"])
    plain = cli("recall", "twine", cwd=seeded, embedder=BrokenEmbedder())
    assert "semantic search unavailable" in plain.stderr and "release" in plain.stdout


def test_other_model_vectors_are_never_ranked_until_reindex(cli, isolated_env):
    cli("remember", "a", "alpha beta", "--store", "s", embedder=FakeEmbedder(64, name="model-a"))
    other = FakeEmbedder(64, name="model-b")
    data = run_json(cli, "recall", "alpha", "--store", "s", "--mode", "semantic", embedder=other)[1]
    assert data["results"] == [] and "reindex" in " ".join(data["notices"])
    # hybrid still finds it by its words, and says why it cannot rank it by meaning
    data = run_json(cli, "recall", "alpha", "--store", "s", embedder=other)[1]
    assert _slugs(data) == ["a"] and data["results"][0]["match"] == "lexical"
    assert "keywords only" in " ".join(data["notices"])
    code, summary = run_json(cli, "reindex", embedder=other)
    assert code == 0 and summary["embedded"] == 1 and summary["model"] == "model-b"
    assert _slugs(run_json(cli, "recall", "alpha", "--store", "s", embedder=other)[1]) == ["a"]
    assert run_json(cli, "reindex", embedder=other)[1]["embedded"] == 0


def test_reindex_fills_missing_vectors_and_reports_model_failure(cli, isolated_env):
    cli("remember", "offline", "saved offline", "--store", "s", embedder=BrokenEmbedder())
    result = cli("reindex", embedder=BrokenEmbedder())
    assert result.exit_code != 0 and "cannot load" in result.stderr
    code, data = run_json(cli, "reindex", "--store", "s")
    assert data["embedded"] == 1
    assert db(isolated_env).get("s", "offline", with_vector=True).embedding is not None


# -- list / show / forget / stores ---------------------------------------------


def test_list_variants(cli, seeded):
    data = run_json(cli, "list", cwd=seeded)[1]
    assert data["store"] == "acme/widget"
    assert sorted(m["slug"] for m in data["memories"]) == ["login-wip", "release"]
    assert [m["slug"] for m in run_json(cli, "list", "global", cwd=seeded)[1]["memories"]] == ["editor"]
    assert [m["slug"] for m in run_json(cli, "list", "--store", "global", cwd=seeded)[1]["memories"]] == ["editor"]
    assert [m["slug"] for m in run_json(cli, "list", "--branch", "feat/login", cwd=seeded)[1]["memories"]] == ["login-wip"]
    assert [m["slug"] for m in run_json(cli, "list", "--archived", cwd=seeded)[1]["memories"]] == ["old-release"]
    plain = cli("list", cwd=seeded)
    assert plain.exit_code == 0
    assert plain.stdout.splitlines() == [
        "login wip\tfeat/login\t\t2026-11-30T12:00:00.123Z\tpublish login form half done",
        "release\t\t\t2026-11-30T12:00:00.123Z\tpublish the package with twine upload"]


def test_show(cli, seeded):
    data = run_json(cli, "show", "release", cwd=seeded)[1]["memory"]
    assert data["content"] == "publish the package with twine upload" and data["store"] == "acme/widget"
    assert run_json(cli, "show", "editor", cwd=seeded)[1]["memory"]["store"] == "global"  # falls back to global
    assert run_json(cli, "show", "Login WIP", cwd=seeded)[1]["memory"]["slug"] == "login-wip"
    plain = cli("show", "release", cwd=seeded)
    assert "# release" in plain.stdout and "acme/widget" in plain.stdout
    missing = cli("show", "nope", cwd=seeded)
    assert missing.exit_code == 3 and "no memory labelled 'nope'" in missing.stderr
    assert cli("show", "editor", "--store", "acme/widget", cwd=seeded).exit_code == 3


def test_forget_clears_verdicts(cli, seeded, isolated_env):
    store = db(isolated_env)
    maintenance.record_verdict(store, "acme/widget", "release", "x", "distinct", "2026-01-01T00:00:00.000Z")
    code, data = run_json(cli, "forget", "release", cwd=seeded)
    assert code == 0 and data["forgotten"]["slug"] == "release"
    assert store.get("acme/widget", "release") is None
    assert maintenance.verdict_of(store, "acme/widget", "release", "x") is None
    assert cli("forget", "release", cwd=seeded).exit_code == 3
    assert cli("forget", "elsewhere", "--store", "other/repo", cwd=seeded).exit_code == 0


def test_stores(cli, seeded):
    data = run_json(cli, "stores", cwd=seeded)[1]["stores"]
    by_name = {s["name"]: s for s in data}
    assert by_name["acme/widget"]["memories"] == 3
    assert by_name["global"]["memories"] == 1
    assert by_name["acme/widget"]["last_update"] == "2026-11-30T12:00:00.123Z"
    plain = cli("stores", cwd=seeded)
    assert "acme/widget\t3\t2026-11-30T12:00:00.123Z" in plain.stdout


def test_version(cli):
    from thatch_cli import __version__

    result = cli("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"thatch {__version__}"


# -- one set of input checks -------------------------------------------------------


@pytest.mark.parametrize("argv, option", [
    (["remember", "x", "y", "--branch"], "--branch"),
    (["archive", "--branch"], "--branch"),
    (["list", "--branch"], "--branch"),
    (["recall", "q", "--branch"], "--branch"),
    (["rescope", "--unscoped", "--from"], "--from"),
    (["rescope", "--from", "ok", "--to"], "--to"),
])
@pytest.mark.parametrize("bad, problem", [("", "is empty"), ("   ", "is empty"), ("a\x1b[31mb", "control character"),
                                          ("x" * 251, "the limit is 250")])
def test_every_branch_option_is_checked_the_same_way(cli, argv, option, bad, problem):
    result = cli(*argv, bad)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"thatch: error: branch name ({option})") and problem in line
    assert "\x1b" not in result.stderr


@pytest.mark.parametrize("label", ["two\nlines", "bell\x07", "esc\x1b]0;title\x07", "x" * 201])
def test_labels_are_one_line_of_printable_text(cli, label, isolated_env):
    result = cli("remember", label, "body")
    assert result.exit_code == 2 and "label" in result.stderr and len(result.stderr.splitlines()) == 1
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert db(isolated_env).list(None, archived=None) == []


def test_show_says_a_row_holds_a_vector_whichever_model_made_it(cli, isolated_env):
    import sqlite3

    assert cli("remember", "A note", "hello world", "--store", "s").exit_code == 0
    shown = json.loads(cli("show", "A note", "s", "--json").stdout)["memory"]
    assert shown["has_vector"] is True and shown["model"] == "fake:64"
    with sqlite3.connect(isolated_env["THATCH_DB"]) as conn:
        conn.execute("UPDATE entries SET model = 'Xenova/bge-small-en-v1.5'")
    shown = json.loads(cli("show", "A note", "s", "--json").stdout)["memory"]
    assert shown["has_vector"] is True and shown["model"] == "Xenova/bge-small-en-v1.5"
    with sqlite3.connect(isolated_env["THATCH_DB"]) as conn:
        conn.execute("UPDATE entries SET embedding = NULL")
    assert json.loads(cli("show", "A note", "s", "--json").stdout)["memory"]["has_vector"] is False


def test_near_duplicate_notice_names_commands_that_work(cli):
    """The notice gives the commands to look at the similar memory and to keep both; both run as printed."""
    import shlex

    cli("remember", "sqlite wal", "We use SQLite in WAL mode for concurrent readers", "--store", "s")
    result = cli("remember", "wal note", "We use SQLite in WAL mode for concurrent readers too", "--store", "s")
    commands = [line.split(": thatch ", 1)[1] for line in result.stderr.splitlines() if ": thatch " in line]
    assert [c.split()[:2] for c in commands] == [["show", "'sqlite"], ["dedup", "keep"]], result.stderr
    for command in commands:
        ran = cli(*shlex.split(command))
        assert ran.exit_code == 0, (command, ran.stderr)
    assert "sqlite wal" in cli("dedup", "list", "--store", "s").stdout
