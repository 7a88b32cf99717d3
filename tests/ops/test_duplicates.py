"""`thatch duplicates` and `thatch dedup mark`: clusters of near-duplicate
memories through the CLI against real SQLite files with hand-made vectors,
the block-wise pair scan against brute force, and the write-time warning
comparing passage to passage."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from thatch_cli.cli import fastpath
from thatch_cli.memory.filter import Filter
from thatch_cli.memory.records import Memory
from thatch_cli.model.embeddings import FakeEmbedder
from thatch_cli.ops import dedup as lifecycle
from thatch_cli.ranking import pairscan
from thatch_cli.ranking.dense import to_blob
from thatch_cli.storage import maintenance
from thatch_cli.storage.memories import MemoryDB

from helpers import run_probed, typer_params

STORE = "acme/widget"
MODEL = {"THATCH_MODEL": "fake:64", "THATCH_STORE": STORE}
KEYS = {"store", "threshold", "model", "limit", "compared", "skipped_other_model", "without_vector", "calibrated",
        "pair_count", "cluster_count", "truncated", "clusters"}


def open_db(env) -> MemoryDB:
    return MemoryDB.open(Path(env["THATCH_DB"]))


def put(db: MemoryDB, slug: str, vector=None, *, model="fake:64", archived=False, store=STORE) -> None:
    blob = to_blob(np.asarray(vector, dtype=np.float32)) if vector is not None else None
    db.save(Memory(store=store, slug=slug, label=slug.replace("-", " ").capitalize(), content=f"# {slug}\n\nbody",
                   created_at="2026-11-30T12:00:00.000Z", updated_at="2026-11-30T12:00:00.000Z",
                   model=model if blob else None, embedding=blob), overwrite=False, archived=archived)


def unit(angle_deg: float, plane: int = 0, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[2 * plane], v[2 * plane + 1] = np.cos(np.radians(angle_deg)), np.sin(np.radians(angle_deg))
    return v


def duplicates(cli, *args, **env):
    result = cli("duplicates", *args, "--json", **{**MODEL, **env})
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.stdout)


def clusters_of(data) -> list[list[str]]:
    return [[m["slug"] for m in c["members"]] for c in data["clusters"]]


# -- clusters -------------------------------------------------------------------------


def test_pairs_chain_into_one_cluster_and_clusters_rank_by_best_pair(cli, isolated_env):
    db = open_db(isolated_env)
    put(db, "a", unit(0))
    put(db, "b", unit(25))  # cos 0.906 with a
    put(db, "c", unit(50))  # cos 0.906 with b, 0.643 with a: joined only through b
    put(db, "x", unit(0, plane=1))
    put(db, "y", unit(10, plane=1))  # cos 0.985 with x: the better cluster
    put(db, "lonely", unit(0, plane=2))
    code, data = duplicates(cli)
    assert code == 0 and set(data) == KEYS
    assert clusters_of(data) == [["x", "y"], ["a", "b", "c"]]
    first, second = data["clusters"]
    assert set(first) == {"size", "best_score", "pair_count", "members", "pairs"}
    assert (first["size"], first["pair_count"], first["best_score"]) == (2, 1, 0.9848)
    assert first["pairs"] == [{"a": {"slug": "x", "label": "X"}, "b": {"slug": "y", "label": "Y"}, "score": 0.9848}]
    assert (second["size"], second["pair_count"]) == (3, 2)
    assert [(p["a"]["slug"], p["b"]["slug"]) for p in second["pairs"]] == [("a", "b"), ("b", "c")]
    assert (data["pair_count"], data["cluster_count"], data["truncated"]) == (3, 2, False)
    assert (data["store"], data["model"], data["threshold"], data["limit"]) == (STORE, "fake:64", 0.85, 200)
    assert (data["compared"], data["skipped_other_model"], data["without_vector"]) == (6, 0, 0)
    # A lower threshold joins a and c directly; a higher one keeps only x~y.
    assert duplicates(cli, "--threshold", "0.6")[1]["clusters"][1]["pair_count"] == 3
    assert clusters_of(duplicates(cli, "-t", "0.95")[1]) == [["x", "y"]]


def test_plain_output_lists_each_cluster_and_exits_zero(cli, isolated_env):
    db = open_db(isolated_env)
    result = cli("duplicates", **MODEL)
    assert result.exit_code == 0 and "No near-duplicates in acme/widget (score ≥ 0.85, 0 memories compared)" \
        in result.stdout
    for slug, angle in (("a", 0), ("b", 25), ("c", 50)):
        put(db, slug, unit(angle))
    result = cli("duplicates", **MODEL)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:3] == ["Cluster 1: 3 memories, 2 pairs, best 0.91", "  0.91  A  <->  B", "  0.91  B  <->  C"]
    assert "thatch dedup mark A B --status duplicate|supplement|contradiction|unrelated" in result.stdout
    assert "acme/widget: 2 near-duplicate pairs in 1 cluster (score ≥ 0.85, 3 memories compared)" in result.stdout
    assert "\x1b[" not in result.stdout  # not a terminal: no colours


def test_only_live_vectors_of_the_configured_model_are_compared(cli, isolated_env):
    db = open_db(isolated_env)
    put(db, "a", unit(0))
    put(db, "mirror", unit(1), model="mirror-org/fake:64")  # another hub name of the same space
    put(db, "archived-twin", unit(0), archived=True)
    put(db, "old-model", unit(0), model="some/other-model")
    put(db, "old-model-too", unit(0), model="some/other-model")
    put(db, "no-vector")
    code, data = duplicates(cli)
    assert clusters_of(data) == [["a", "mirror"]]
    assert (data["compared"], data["skipped_other_model"], data["without_vector"]) == (2, 2, 1)
    plain = cli("duplicates", **MODEL)
    assert "2 live memories have a vector of another model than fake:64" in plain.stderr
    assert "1 live memory has no vector" in plain.stderr
    # Under the other model the roles swap: only its two rows are compared.
    other = FakeEmbedder(64, name="some/other-model")
    code, data = duplicates(cli, THATCH_MODEL="some/other-model", embedder=other)
    assert clusters_of(data) == [["old-model", "old-model-too"]] and data["skipped_other_model"] == 2
    # hygiene compares what duplicates compares, so both count the same pairs.
    hygiene = json.loads(cli("hygiene", "--json", **MODEL).stdout)
    assert {(p["a"]["slug"], p["b"]["slug"]) for p in hygiene["duplicates"]} == {("a", "mirror")}
    check = hygiene["duplicate_check"]
    assert (check["pair_count"], check["skipped_other_model"], check["truncated"]) == (1, 2, False)


def test_verdicts_remove_pairs_before_clustering(cli, isolated_env):
    db = open_db(isolated_env)
    for slug, angle in (("a", 0), ("b", 25), ("c", 50)):
        put(db, slug, unit(angle))
    assert cli("dedup", "mark", "a", "b", "--status", "supplement", **MODEL).exit_code == 0
    code, data = duplicates(cli)
    assert clusters_of(data) == [["b", "c"]] and data["pair_count"] == 1  # a no longer hangs on through b
    hygiene = json.loads(cli("hygiene", "--json", **MODEL).stdout)
    assert [(p["a"]["slug"], p["b"]["slug"]) for p in hygiene["duplicates"]] == [("b", "c")]


def test_limit_keeps_the_best_pairs_and_complete_cluster_counts(cli, isolated_env):
    db = open_db(isolated_env)
    for i in range(6):
        put(db, f"same-{i}", unit(0))  # 15 identical pairs
    put(db, "p", unit(0, plane=1))
    put(db, "q", unit(20, plane=1))  # cos 0.940: a second, weaker cluster
    code, data = duplicates(cli, "--limit", "4")
    assert code == 0
    assert (data["pair_count"], data["cluster_count"], data["truncated"], data["limit"]) == (16, 2, True, 4)
    [cluster] = data["clusters"]  # p~q holds no reported pair
    assert (cluster["size"], cluster["pair_count"], len(cluster["members"])) == (6, 15, 6)
    assert [(p["a"]["slug"], p["b"]["slug"]) for p in cluster["pairs"]] == [
        ("same-0", "same-1"), ("same-0", "same-2"), ("same-0", "same-3"), ("same-0", "same-4")]
    plain = cli("duplicates", "-n", "1", **MODEL)
    assert "showing the best 1 of 16 pairs (1 of 2 clusters)" in plain.stderr
    assert "also in this cluster: Same 2, Same 3, Same 4, Same 5" in plain.stdout
    assert duplicates(cli, "--limit", "17")[1]["truncated"] is False


@pytest.mark.parametrize("args, message", [
    (["--threshold", "0"], "--threshold must be above 0 and at most 1"),
    (["--threshold", "-0.5"], "--threshold must be above 0 and at most 1"),
    (["--threshold", "1.01"], "--threshold must be above 0 and at most 1"),
    (["--threshold", "nan"], "--threshold must be above 0 and at most 1"),
    (["--limit", "0"], "--limit must be between 1 and 10000"),
])
def test_bad_threshold_or_limit_is_one_line_exit_2(cli, args, message):
    result = cli("duplicates", *args, **MODEL)
    assert result.exit_code == 2 and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"thatch: error: {message}, got ")
    error = json.loads(cli("duplicates", *args, "--json", **MODEL).stdout)["error"]
    assert error["code"] == "invalid_input" and error["exit_code"] == 2
    assert cli("duplicates", "--threshold", "1", **MODEL).exit_code == 0  # the bounds: (0, 1]


# -- verdicts -------------------------------------------------------------------------


@pytest.mark.parametrize("status", lifecycle.VERDICTS)
def test_mark_records_each_status(cli, isolated_env, status):
    db = open_db(isolated_env)
    put(db, "deploy-steps", unit(0))
    put(db, "deploy-notes", unit(5))
    result = cli("dedup", "mark", "Deploy steps", "deploy-notes", "--status", status, "--json", **MODEL)
    verdict = json.loads(result.stdout)
    assert result.exit_code == 0
    assert set(verdict) == {"store", "status", "checked_at", "previous", "a", "b"}
    assert (verdict["status"], verdict["previous"], verdict["a"]["slug"]) == (status, None, "deploy-notes")
    assert maintenance.verdict_of(db, STORE, "deploy-steps", "deploy-notes") == status
    assert duplicates(cli)[1]["clusters"] == []
    listing = json.loads(cli("dedup", "list", "--json", **MODEL).stdout)["verdicts"]
    assert [row["status"] for row in listing] == [status]
    assert cli("dedup", "list", **MODEL).stdout.startswith(f"{status}\tDeploy notes\tDeploy steps\t")
    # `dedup keep` still records "distinct", replacing the verdict.
    kept = json.loads(cli("dedup", "keep", "deploy-steps", "deploy-notes", "--json", **MODEL).stdout)
    assert (kept["status"], kept["previous"]) == ("distinct", status)


def test_mark_mistakes_are_one_line_and_change_nothing(cli, isolated_env):
    db = open_db(isolated_env)
    put(db, "one", unit(0))
    put(db, "two", unit(1))
    put(db, "elsewhere", unit(0), store="global")
    for status in ("bogus", "distinct", ""):
        result = cli("dedup", "mark", "one", "two", "--status", status, **MODEL)
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
        assert "use one of duplicate, supplement, contradiction, unrelated" in result.stderr
    result = cli("dedup", "mark", "one", "elsewhere", "--status", "duplicate", **MODEL)
    assert result.exit_code == 2 and "verdicts pair memories of one store" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert cli("dedup", "mark", "one", "missing", "--status", "duplicate", **MODEL).exit_code == 3
    assert cli("dedup", "mark", "one", "One", "--status", "duplicate", **MODEL).exit_code == 2  # itself
    assert maintenance.verdicts(db, STORE) == [] and maintenance.verdicts(db, "global") == []


def test_overwriting_or_forgetting_either_memory_clears_its_verdicts(cli, isolated_env):
    embedder = FakeEmbedder(64)
    for label in ("Deploy steps", "Deploy notes", "Deploy howto"):
        assert cli("remember", label, "run make deploy to push the release to prod", embedder=embedder,
                   **MODEL).exit_code == 0
    assert duplicates(cli)[1]["pair_count"] == 3
    for other in ("Deploy notes", "Deploy howto"):
        cli("dedup", "mark", "Deploy steps", other, "--status", "duplicate", **MODEL)
    cli("dedup", "mark", "Deploy notes", "Deploy howto", "--status", "unrelated", **MODEL)
    assert duplicates(cli)[1]["pair_count"] == 0
    db = open_db(isolated_env)
    cli("remember", "Deploy steps", "run make deploy to push the release to prod!", "--overwrite",
        embedder=embedder, **MODEL)
    assert maintenance.verdicts(db, STORE) == [("deploy-howto", "deploy-notes", "unrelated",
                                              "2026-11-30T12:00:00.123Z")]
    assert {(p["a"]["slug"], p["b"]["slug"]) for p in duplicates(cli)[1]["clusters"][0]["pairs"]} == {
        ("deploy-howto", "deploy-steps"), ("deploy-notes", "deploy-steps")}
    assert cli("forget", "Deploy notes", **MODEL).exit_code == 0
    assert maintenance.verdicts(db, STORE) == []


# -- the pair scan --------------------------------------------------------------------


def brute_force(matrix, threshold, skip):
    n = len(matrix)
    scores = matrix @ matrix.T
    pairs = [(i, j, float(scores[i, j])) for i in range(n) for j in range(i + 1, n)
             if scores[i, j] >= threshold and (i, j) not in skip]
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for i, j, _ in pairs:
        parent[find(j)] = find(i)
    groups: dict[int, list[int]] = {}
    for row in sorted({r for i, j, _ in pairs for r in (i, j)}):
        groups.setdefault(find(row), []).append(row)
    return pairs, sorted(groups.values())


@pytest.mark.parametrize("block_cells", [1, 7, 64, 10_000])
def test_block_scan_matches_brute_force(block_cells):
    rng = np.random.default_rng(block_cells)
    centres = rng.normal(size=(12, 16))
    rows = np.concatenate([centres[rng.integers(0, 12, 90)] + rng.normal(scale=0.25, size=(90, 16)),
                           np.repeat(centres[:1], 5, axis=0)])  # some exact ties too
    matrix = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    expected_pairs, expected_groups = brute_force(matrix, 0.9, set())
    skip = set((i, j) for i, j, _ in expected_pairs[::7])
    expected_pairs, expected_groups = brute_force(matrix, 0.9, skip)
    assert len(expected_pairs) > 20 and any(len(g) > 2 for g in expected_groups)
    found = pairscan.scan(matrix, 0.9, limit=15, block_cells=block_cells,
                          skip=tuple(np.array(side) for side in zip(*sorted(skip))))
    assert found.pair_count == len(expected_pairs)
    assert sorted(c.rows for c in found.components) == expected_groups
    ranked = sorted(expected_pairs, key=lambda p: (-np.round(np.float32(p[2]), 6), p[0], p[1]))[:15]
    assert [(i, j) for i, j, _ in found.pairs] == [(i, j) for i, j, _ in ranked]
    for component in found.components:
        inside = [p for p in expected_pairs if p[0] in component.rows]
        assert component.pair_count == len(inside)
        assert component.best == pytest.approx(max(s for _, _, s in inside), abs=1e-6)
    assert [c.best for c in found.components] == sorted((c.best for c in found.components), reverse=True)


def test_identical_rows_make_one_cluster_without_keeping_every_pair():
    matrix = np.tile(unit(0, dim=16), (2_000, 1))
    found = pairscan.scan(matrix, 0.85, limit=10, block_cells=50_000)
    assert found.pair_count == 2_000 * 1_999 // 2 and len(found.pairs) == 10
    [component] = found.components
    assert len(component.rows) == 2_000 and component.pair_count == found.pair_count


# -- the command line -----------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["duplicates"],
    ["duplicates", "--store", "s", "--threshold", "0.9", "-n", "5", "--json"],
    ["duplicates", "--threshold=0.75", "--limit=3"],
    ["dedup", "mark", "a", "b", "--status", "duplicate"],
    ["dedup", "mark", "a b", "c", "--status=unrelated", "-s", "global", "--json"],
])
def test_fast_parse_matches_typer(argv, monkeypatch):
    assert fastpath.parse(fastpath.load_spec(), argv) == typer_params(argv, monkeypatch)


@pytest.mark.parametrize("fast", ["1", "0"])
def test_duplicates_never_loads_the_model(isolated_env, tmp_path, minilm_folder, fast):
    """A real process with a loadable model configured: the stored vectors
    are compared as they are, so torch and sentence-transformers stay unloaded."""
    from thatch_cli.model.embeddings import model_identity

    db = open_db(isolated_env)
    identity = model_identity(minilm_folder, isolated_env)
    put(db, "a", unit(0), model=identity)
    put(db, "b", unit(5), model=identity)
    env = {**os.environ, "THATCH_MODEL": minilm_folder, "THATCH_STORE": STORE, "THATCH_FASTPATH": fast}
    for args in (["duplicates", "--json"], ["dedup", "mark", "a", "b", "--status", "duplicate"]):
        result, modules = run_probed(args, env=env, cwd=tmp_path, tmp_path=tmp_path)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        assert modules, (args, result.stderr)  # the probe reported
        loaded = sorted(modules & {"torch", "sentence_transformers", "transformers"})  # typer may load
        assert loaded == [], (args, loaded)
        if args[0] == "duplicates":
            assert clusters_of(json.loads(result.stdout)) == [["a", "b"]]


# -- the write-time warning: passage against passage ------------------------------------


class RecordingEmbedder(FakeEmbedder):
    """FakeEmbedder noting which kind of embedding each call asked for."""

    def __init__(self) -> None:
        super().__init__(64)
        self.calls: list[str] = []

    def embed_query(self, text):
        self.calls.append("query")
        return super().embed_query(text)

    def embed_passages(self, texts):
        self.calls.append("passages")
        return super().embed_passages(texts)


def test_remember_warns_by_comparing_passages_never_queries(cli):
    embedder = RecordingEmbedder()
    cli("remember", "Deploy steps", "run make deploy to push the release to prod", embedder=embedder, **MODEL)
    result = cli("remember", "Deploy notes", "run make deploy to push the release to prod now", "--json",
                 embedder=embedder, **MODEL)
    assert [s["slug"] for s in json.loads(result.stdout)["similar"]] == ["deploy-steps"]
    assert embedder.calls == ["passages", "passages"]


def test_the_daemon_embeds_a_passage_search_as_a_passage(isolated_env, tmp_path):
    from thatch_cli.daemon import protocol
    from thatch_cli.daemon.server import Server

    db = open_db(isolated_env)
    put(db, "deploy-steps", FakeEmbedder(64).embed_passages(["deploy steps"])[0])
    db.close()
    embedder = RecordingEmbedder()

    class Model:
        name, dim, calibration = "fake:64", 64, None
        embed_query, embed_passages = embedder.embed_query, embedder.embed_passages

    server = Server(isolated_env, str(tmp_path))
    server.model.close()
    server.model = Model()
    try:
        reply, vector = server.dispatch(protocol.SHAPES["search"].request(
            server.identity(), db=isolated_env["THATCH_DB"], filter=Filter([STORE], any_branch=True).to_json(),
            query=None, passage="deploy steps", limit=3, min_score=None, wait=True), b"")
    finally:
        server.cache.close()
    assert embedder.calls == ["passages"]
    assert [hit[1] for hit in reply["hits"]] == ["deploy-steps"] and len(vector) == 4 * 64
