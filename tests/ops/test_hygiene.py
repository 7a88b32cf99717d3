"""hygiene, rescope, archive and dedup verdicts: through the CLI against real
SQLite files and real git repositories, plus the vector maths directly."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from thatch_cli.memory.records import Memory
from thatch_cli.ops import dedup
from thatch_cli.ops import hygiene as lifecycle
from thatch_cli.ranking.dense import to_blob
from thatch_cli.storage import maintenance
from thatch_cli.storage.memories import MemoryDB
from thatch_cli.support.errors import EXIT_ATTENTION

from helpers import FIXED_NOW, git, run_probed

STORE = "acme/widget"
KEYS = {"store", "clean", "exit_code", "checked_at", "stale_days", "unreadable", "duplicates", "duplicate_check", "stale",
        "drifted",
        "orphans"}


def open_db(env) -> MemoryDB:
    return MemoryDB.open(Path(env["THATCH_DB"]))


def run_json(cli, *args, **kwargs):
    result = cli(*args, "--json", **kwargs)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.stdout)


def at(days: float):
    return lambda: FIXED_NOW + timedelta(days=days)


@pytest.fixture
def repo(git_repo):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


def put(db: MemoryDB, slug: str, vector=None, *, model="fake:64", archived=False, branch=None,
        updated="2026-11-30T12:00:00.000Z", recalled=None, store=STORE) -> None:
    """A row written directly, with an exact vector."""
    blob = to_blob(np.asarray(vector, dtype=np.float32)) if vector is not None else None
    db.save(Memory(store=store, slug=slug, label=slug.replace("-", " "), content=f"# {slug}\n\nbody",
                   branch=branch, created_at=updated, updated_at=updated, last_recalled_at=recalled,
                   model=model if blob else None, embedding=blob), overwrite=False, archived=archived)


def unit(angle_deg: float, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[0], v[1] = np.cos(np.radians(angle_deg)), np.sin(np.radians(angle_deg))
    return v


# -- near-duplicates ------------------------------------------------------------------


def test_clean_store_exits_zero_with_every_key(cli, repo):
    cli("remember", "Build steps", "run make release from the main branch", cwd=repo)
    cli("remember", "Coffee", "the espresso machine lives on floor three", cwd=repo)
    code, data = run_json(cli, "hygiene", cwd=repo)
    assert code == 0
    assert set(data) == KEYS
    assert data["clean"] is True and data["exit_code"] == 0 and data["store"] == STORE
    assert data["duplicates"] == [] and data["stale"] == []
    assert data["orphans"] == {"checked": True, "skipped_reason": None,
                               "repository": str(repo.resolve()), "branches": []}
    assert data["duplicate_check"]["compared"] == 2 and data["duplicate_check"]["spaces"] == ["fake:64/64"]
    plain = cli("hygiene", cwd=repo)
    assert plain.exit_code == 0 and f"{STORE}: clean" in plain.stdout


def test_near_duplicates_reported_until_a_verdict_is_recorded(cli, repo, isolated_env):
    cli("remember", "Deploy steps", "run make deploy to push the release to prod", cwd=repo)
    cli("remember", "Deploy notes", "run make deploy to push the release to prod now", cwd=repo)
    cli("remember", "Coffee", "the espresso machine lives on floor three", cwd=repo)
    code, data = run_json(cli, "hygiene", cwd=repo)
    assert code == EXIT_ATTENTION == 5 and data["clean"] is False and data["exit_code"] == 5
    [pair] = data["duplicates"]
    assert pair["score"] >= 0.85
    assert (pair["a"]["slug"], pair["b"]["slug"]) == ("deploy-notes", "deploy-steps")
    plain = cli("hygiene", cwd=repo)
    assert plain.exit_code == 5 and "thatch dedup keep 'Deploy notes' 'Deploy steps'" in plain.stdout

    code, verdict = run_json(cli, "dedup", "keep", "deploy steps", "Deploy notes", cwd=repo)
    assert code == 0
    assert set(verdict) == {"store", "status", "checked_at", "previous", "a", "b"}
    assert verdict["status"] == "distinct" and verdict["previous"] is None and verdict["store"] == STORE
    assert maintenance.verdict_of(open_db(isolated_env), STORE, "deploy-steps", "deploy-notes") == "distinct"
    code, data = run_json(cli, "hygiene", cwd=repo)
    assert code == 0 and data["duplicates"] == []
    code, listing = run_json(cli, "dedup", "list", cwd=repo)
    assert listing["verdicts"] == [{"slug_a": "deploy-notes", "label_a": "Deploy notes", "slug_b": "deploy-steps",
                                    "label_b": "Deploy steps", "status": "distinct",
                                    "checked_at": "2026-11-30T12:00:00.123Z"}]

    # Overwriting one of the pair clears the verdict: the pair comes back.
    cli("remember", "Deploy notes", "run make deploy to push the release to prod today", "--overwrite", cwd=repo)
    code, data = run_json(cli, "hygiene", cwd=repo)
    assert code == 5 and len(data["duplicates"]) == 1


def test_dedup_keep_mistakes(cli, repo):
    cli("remember", "One", "x", cwd=repo)
    cli("remember", "Two", "y", "--store", "global", cwd=repo)
    result = cli("dedup", "keep", "One", "one", cwd=repo)
    assert result.exit_code == 2 and "itself" in result.stderr
    result = cli("dedup", "keep", "One", "missing", cwd=repo)
    assert result.exit_code == 3
    result = cli("dedup", "keep", "One", "Two", cwd=repo)  # one store each
    assert result.exit_code == 2 and "one store" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_duplicates_compare_only_live_rows_of_one_space_and_width(isolated_env, make_ctx):
    db = open_db(isolated_env)
    put(db, "a", unit(0))
    put(db, "b", unit(10))  # cos 0.985 with a
    put(db, "c", unit(40))  # cos 0.766 with a, 0.866 with b
    put(db, "archived-twin", unit(0), archived=True)
    put(db, "other-model", unit(0), model="some/other-model")
    put(db, "other-width", unit(0, dim=16))
    put(db, "no-vector")
    put(db, "mirror", unit(0), model="mirror-org/fake:64")  # another hub name of the same space
    scan = dedup.near_duplicates(db, STORE)
    found = {(p.a.slug, p.b.slug): round(p.score, 3) for p in scan.pairs}
    assert found == {("a", "b"): 0.985, ("b", "c"): 0.866, ("a", "mirror"): 1.0, ("b", "mirror"): 0.985}
    assert [(p.a.slug, p.b.slug) for p in scan.pairs][0] == ("a", "mirror")  # best first
    assert scan.compared == 6 and scan.without_vector == 1
    assert scan.spaces == ["fake:64/8", "fake:64/16", "other-model/8"]
    maintenance.record_verdict(db, STORE, "mirror", "a", "distinct", "2026-01-01T00:00:00.000Z")
    assert ("a", "mirror") not in {(p.a.slug, p.b.slug) for p in dedup.near_duplicates(db, STORE).pairs}


def test_duplicate_threshold_edges_and_blocking(isolated_env, monkeypatch):
    db = open_db(isolated_env)
    put(db, "base", unit(0))
    put(db, "inside", unit(31.0))  # cos 0.857
    put(db, "outside", unit(32.5))  # cos 0.843 (and 0.9997 with inside)
    pairs = {(p.a.slug, p.b.slug) for p in dedup.near_duplicates(db, STORE).pairs}
    assert pairs == {("base", "inside"), ("inside", "outside")}
    # The pairwise product is computed in row blocks for big stores: same answer.
    monkeypatch.setattr(dedup, "_BLOCK_CELLS", 1)
    assert {(p.a.slug, p.b.slug) for p in dedup.near_duplicates(db, STORE).pairs} == pairs


# -- stale memories -------------------------------------------------------------------


def test_stale_uses_update_and_recall_times_and_the_clock(cli, repo, make_ctx):
    cli("remember", "Old note", "written long ago about tokens", cwd=repo)
    cli("remember", "Used note", "written long ago about frobnicators", cwd=repo)
    later = make_ctx(cwd=repo, clock=at(60))
    assert cli("recall", "frobnicators", "--limit", "1", ctx=later).exit_code == 0  # stamps it
    code, data = run_json(cli, "hygiene", ctx=make_ctx(cwd=repo, clock=at(100)))
    assert code == 5
    assert [s["slug"] for s in data["stale"]] == ["old-note"]
    stale = data["stale"][0]
    assert stale["idle_days"] == 100 and stale["last_activity"] == "2026-11-30T12:00:00.123Z"
    assert stale["last_recalled_at"] is None
    assert run_json(cli, "hygiene", "--stale-days", "101", ctx=make_ctx(cwd=repo, clock=at(100)))[0] == 0
    code, data = run_json(cli, "hygiene", "--stale-days", "30", ctx=make_ctx(cwd=repo, clock=at(100)))
    assert [s["slug"] for s in data["stale"]] == ["old-note", "used-note"]
    assert cli("hygiene", "--stale-days", "-1", cwd=repo).exit_code == 2


def test_stale_reads_the_original_timestamp_formats(isolated_env):
    db = open_db(isolated_env)
    now = datetime(2026, 6, 1, tzinfo=timezone.utc)
    put(db, "space-no-millis", unit(0), updated="2026-01-01 10:00:00")
    put(db, "offset", unit(90), updated="2026-05-20T10:00:00+02:00")
    put(db, "recalled-recently", unit(45), updated="2025-01-01T00:00:00Z", recalled="2026-05-30T00:00:00.000Z")
    put(db, "garbage", unit(60), updated="not a time")
    put(db, "archived-old", unit(70), updated="2020-01-01T00:00:00Z", archived=True)
    stale = lifecycle.stale_memories(db, STORE, now, 90)
    assert [(s.memory.slug, s.idle_days) for s in stale] == [("space-no-millis", 150)]
    assert [s.memory.slug for s in lifecycle.stale_memories(db, STORE, now, 10)] == ["space-no-millis", "offset"]


# -- orphaned branches ----------------------------------------------------------------


def test_orphaned_branch_memories_reported_with_deletion_time(cli, repo, isolated_env):
    git(repo, "switch", "-qc", "feat/login")
    cli("remember", "Login flow", "tokens expire after an hour", "--this-branch", cwd=repo)
    cli("remember", "Old login", "cookies were used before", "--this-branch", "--archived", cwd=repo)
    git(repo, "switch", "-qc", "keep-me")
    cli("remember", "Kept", "this branch still exists", "--this-branch", cwd=repo)
    git(repo, "switch", "-q", "main")
    assert run_json(cli, "hygiene", cwd=repo)[0] == 0
    git(repo, "branch", "-qD", "feat/login")
    code, data = run_json(cli, "hygiene", cwd=repo)
    assert code == 5
    [orphan] = data["orphans"]["branches"]
    assert orphan["branch"] == "feat/login" and orphan["deleted_at"] is None
    assert [m["slug"] for m in orphan["memories"]] == ["login-flow"]  # live only
    # The git hooks record deletions; hygiene says when.
    db = open_db(isolated_env)
    db.conn.execute("INSERT INTO thatch_cli_deleted_branches (store, branch, deleted_at, memories)"
                    " VALUES (?, 'feat/login', '2026-11-29T08:00:00.000Z', 1)", (STORE,))
    code, data = run_json(cli, "hygiene", cwd=repo)
    assert data["orphans"]["branches"][0]["deleted_at"] == "2026-11-29T08:00:00.000Z"
    plain = cli("hygiene", cwd=repo)
    assert "feat/login (1 memory, deleted 2026-11-29): Login flow" in plain.stdout
    assert "thatch archive --branch feat/login" in plain.stdout
    # From a subdirectory, packed refs and a linked worktree the answer is the same.
    (repo / "sub").mkdir()
    git(repo, "pack-refs", "--all")
    git(repo, "worktree", "add", "-q", str(repo.parent / "wt"), "keep-me")
    for where in (repo / "sub", repo.parent / "wt"):
        code, data = run_json(cli, "hygiene", cwd=where)
        assert [b["branch"] for b in data["orphans"]["branches"]] == ["feat/login"], where


def test_missing_deleted_branches_table_is_fine(isolated_env):
    db = open_db(isolated_env)
    db.conn.execute("DROP TABLE thatch_cli_deleted_branches")
    assert maintenance.branch_deletions(db, STORE) == {}


def test_orphan_check_skipped_outside_a_repository_or_for_another_repos_store(cli, repo, tmp_path):
    git(repo, "switch", "-qc", "feat")
    cli("remember", "Wip", "half done", "--this-branch", cwd=repo)
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    result = cli("hygiene", "--store", STORE, "--json", cwd=elsewhere)
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["clean"] is True
    assert data["orphans"]["checked"] is False and data["orphans"]["branches"] == []
    assert "not inside a git repository" in data["orphans"]["skipped_reason"]
    plain = cli("hygiene", "--store", STORE, cwd=elsewhere)
    assert "orphaned-branch check skipped" in plain.stderr
    # Another repository's branches say nothing about this store's.
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    data = run_json(cli, "hygiene", "--store", STORE, cwd=other)[1]
    assert data["orphans"]["checked"] is False and "does not belong" in data["orphans"]["skipped_reason"]
    # THATCH_STORE names the store this directory uses: checked. The unborn
    # branch HEAD names (no commit yet) is not a deleted one.
    cli("remember", "Unborn", "first commit pending", "--branch", "main", "--store", STORE, cwd=repo)
    data = run_json(cli, "hygiene", cwd=other, THATCH_STORE=STORE)[1]
    assert data["orphans"]["checked"] is True
    assert [b["branch"] for b in data["orphans"]["branches"]] == ["feat"]


# -- rescope and archive --------------------------------------------------------------


def test_rescope_to_branch_and_unscoped(cli, isolated_env):
    cli("remember", "a", "alpha", "--store", "s", "--branch", "old")
    cli("remember", "b", "beta", "--store", "s", "--branch", "old", "--archived")
    cli("remember", "c", "gamma", "--store", "s", "--branch", "other")
    cli("remember", "d", "delta", "--store", "t", "--branch", "old")
    code, data = run_json(cli, "rescope", "--from", "old", "--to", "new", "--store", "s")
    assert code == 0
    assert set(data) == {"store", "from", "to", "changed", "memories", "branches_left"}
    assert (data["store"], data["from"], data["to"], data["changed"]) == ("s", "old", "new", 2)
    assert {m["slug"]: (m["branch"], m["archived"]) for m in data["memories"]} == {"a": ("new", False),
                                                                                   "b": ("new", True)}
    assert data["branches_left"] == ["new", "other"]
    db = open_db(isolated_env)
    assert db.get("t", "d").branch == "old"  # other stores untouched
    before = db.get("s", "a").updated_at
    code, data = run_json(cli, "rescope", "--from", "new", "--unscoped", "--store", "s")
    assert data["to"] is None and data["changed"] == 2
    assert db.get("s", "a").branch is None and db.get("s", "b").branch is None
    assert db.get("s", "a").updated_at == before
    plain = cli("rescope", "--from", "other", "--unscoped", "--store", "s")
    assert "Moved 1 memory in s from branch other to unscoped" in plain.stdout and "  c" in plain.stdout
    nothing = cli("rescope", "--from", "gone", "--to", "x", "--store", "s", "--json")
    error = json.loads(nothing.stdout)["error"]
    assert nothing.exit_code == 3 and error["code"] == "not_found" and error["branch"] == "gone"
    assert "nothing moved" in error["message"] and error["branches_left"] == []


@pytest.mark.parametrize("args, message", [
    (["--from", "a"], "exactly one of"),
    (["--from", "a", "--to", "b", "--unscoped"], "exactly one of"),
    (["--from", "a", "--to", "a"], "same branch"),
    (["--from", "  ", "--unscoped"], "empty"),
])
def test_rescope_mistakes(cli, args, message):
    result = cli("rescope", *args, "--store", "s")
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.output
    data = json.loads(cli("rescope", *args, "--store", "s", "--json").stdout)
    assert data["error"]["code"] == "invalid_input"


def test_archive_branch(cli, repo, isolated_env):
    git(repo, "switch", "-qc", "spike")
    cli("remember", "Spike result", "the cache halves latency", "--this-branch", cwd=repo)
    cli("remember", "Spike old", "an older result", "--this-branch", "--archived", cwd=repo)
    cli("remember", "Project", "unscoped", cwd=repo)
    git(repo, "switch", "-q", "main")
    git(repo, "branch", "-qD", "spike")
    assert run_json(cli, "hygiene", cwd=repo)[0] == 5
    code, data = run_json(cli, "archive", "--branch", "spike", cwd=repo)
    assert code == 0 and set(data) == {"store", "branch", "changed", "memories", "branches_left"}
    assert (data["store"], data["branch"], data["changed"]) == (STORE, "spike", 1)
    assert data["memories"][0]["slug"] == "spike-result" and data["memories"][0]["archived"] is True
    db = open_db(isolated_env)
    assert db.get(STORE, "spike-result").archived and not db.get(STORE, "project").archived
    assert run_json(cli, "hygiene", cwd=repo)[0] == 0  # archived memories are out of hygiene
    again = cli("archive", "-b", "spike", cwd=repo)
    assert again.exit_code == 3 and again.stdout == ""
    assert again.stderr == f"thatch: error: no live memories scoped to branch spike in {STORE}; nothing archived\n"


# -- real processes ---------------------------------------------------------------------


def test_fast_path_runs_the_commands_with_their_exit_codes(tmp_path, repo):
    env = {**os.environ, "THATCH_MODEL": "fake:64"}

    def thatch(*args):
        result, modules = run_probed(args, env=env, cwd=repo, tmp_path=tmp_path)
        assert "Traceback" not in result.stderr, result.stderr
        assert modules, result.stderr  # the probe reported
        return result, sorted(modules & {"numpy", "typer", "torch", "dulwich"})

    thatch("remember", "Deploy steps", "run make deploy to push the release to prod")
    thatch("remember", "Deploy notes", "run make deploy to push the release to prod now")
    result, loaded = thatch("hygiene", "--json")
    assert result.returncode == 5 and json.loads(result.stdout)["exit_code"] == 5
    assert "typer" not in loaded and "numpy" in loaded  # the fast dispatcher ran it
    result, loaded = thatch("dedup", "keep", "Deploy steps", "Deploy notes", "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["status"] == "distinct"
    assert loaded == []  # recording a verdict needs neither Typer nor numpy
    result, loaded = thatch("archive", "--branch", "nope", "--json")
    assert result.returncode == 3 and loaded == [] and json.loads(result.stdout)["error"]["exit_code"] == 3
    result, loaded = thatch("rescope", "--from", "nope", "--unscoped")
    assert result.returncode == 3 and loaded == [] and "nothing moved" in result.stderr
    result, _ = thatch("hygiene")
    assert result.returncode == 0 and "clean" in result.stdout


def test_stale_advice_names_the_archive_command(cli, repo, make_ctx):
    """The advice for stale memories is a command that exists for it: thatch archive LABEL."""
    cli("remember", "Old note", "written long ago about tokens", cwd=repo)
    result = cli("hygiene", ctx=make_ctx(cwd=repo, clock=at(100)))
    assert result.exit_code == 5
    assert "thatch archive 'Old note'" in result.stdout and "thatch forget 'Old note'" in result.stdout
    assert "--overwrite --archived" not in result.stdout
    assert cli("archive", "Old note", ctx=make_ctx(cwd=repo, clock=at(100))).exit_code == 0
