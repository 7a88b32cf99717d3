"""Bulk export/import as JSONL: lossless round trip, conflicts, malformed
lines, re-embedding rules, batching, scopes."""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import stat
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from thatch_cli.model.embeddings import FakeEmbedder
from thatch_cli.ops import transfer
from thatch_cli.ops.recall import recall
from thatch_cli.ops.remember import remember
from thatch_cli.storage.maintenance import record_verdict
from thatch_cli.storage.memories import MemoryDB
from thatch_cli.support.errors import EXIT_ATTENTION

from helpers import BrokenEmbedder


def rows(path: str | Path, table: str = "entries") -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] != "id"]
        data = conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {', '.join(columns[:3])}").fetchall()
        return [tuple(zip(columns, row)) for row in data]
    finally:
        conn.close()


def memory_lines(text: str) -> list[dict]:
    return [record for record in map(json.loads, text.splitlines()) if "_record" not in record]


class CountingEmbedder(FakeEmbedder):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.batches: list[int] = []

    def embed_passages(self, texts):
        self.batches.append(len(texts))
        return super().embed_passages(texts)


@pytest.fixture
def source(make_ctx, isolated_env, tmp_path):
    """A database with every kind of row: branches, confidence, archived,
    recall telemetry, unicode, a replaced memory, several stores."""
    clock = [datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)]

    def tick():
        clock[0] += timedelta(seconds=7, milliseconds=11)
        return clock[0]

    ctx = make_ctx(clock=tick, THATCH_STORE="acme/widget")
    remember(ctx, "publish the package with twine upload", "Release", confidence=9)
    remember(ctx, "login form half done", "Login wip", branch="feat/login")
    remember(ctx, "old deploy with fabric", "Old deploy", archived=True)
    remember(ctx, "Ünïcödé — emoji 🚀 and\nnew lines\r\nand \"quotes\"", "Unicode ✓")
    remember(ctx, "first version", "Replaced")
    remember(ctx, "second version", "Replaced", overwrite=True, confidence=2)
    remember(ctx, "prefer vim keybindings", "Editor", store="global")
    remember(ctx, "docs in the wiki", "Wiki", store="other/repo")
    recall(ctx, "publish the package with twine upload", store="acme/widget", limit=1)
    recall(ctx, "publish the package with twine upload", store="acme/widget", limit=1)
    record_verdict(ctx.db(), "acme/widget", "release", "old-deploy", "supplement", "2026-01-03T00:00:00.000Z")
    # The original thatch writes '' for "no branch"; keep it apart from NULL.
    ctx.db().conn.execute("UPDATE entries SET branch = '' WHERE slug = 'wiki'")
    ctx.close()
    return isolated_env["THATCH_DB"]


def test_export_then_import_round_trips_losslessly(cli, source, tmp_path, isolated_env):
    dump = tmp_path / "all.jsonl"
    result = cli("export", "--all", "--with-vectors", "--output", str(dump), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["exported"] == 7 and summary["with_vectors"] and summary["output"] == str(dump)
    assert stat.S_IMODE(os.stat(dump).st_mode) == 0o600
    records = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()]
    memories = memory_lines(dump.read_text(encoding="utf-8"))
    assert len(memories) == 7 and all(m["embedding"] for m in memories)
    # The verdict, and the versions an overwrite and an SQL update left in the history.
    assert [r["_record"] for r in records[7:]] == ["verdict", "version", "version"]

    target = tmp_path / "empty.db"
    result = cli("import", str(dump), "--json", THATCH_DB=str(target))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["created"], report["replaced"], report["skipped"], report["embedded"],
            report["kept_vectors"], report["errors"]) == (7, 0, 0, 0, 7, [])
    before, after = rows(source), rows(target)
    assert after == before
    assert (report["verdicts"], report["versions"]) == (1, 2)
    for table in ("dedup_pairs", "thatch_cli_history"):
        assert rows(target, table) == rows(source, table) and rows(source, table)
    columns = {name for name, _ in before[0]}
    assert {"created_at", "updated_at", "recall_count", "last_recalled_at", "archived", "branch", "confidence",
            "model", "embedding"} <= columns
    recalled = dict(next(r for r in after if dict(r)["slug"] == "release"))
    assert recalled["recall_count"] == 2 and recalled["last_recalled_at"] and recalled["confidence"] == 9
    wiki = dict(next(r for r in after if dict(r)["slug"] == "wiki"))
    assert wiki["branch"] == ""  # '' and NULL are kept apart
    # The imported database works: recall ranks the imported vectors.
    data = json.loads(cli("recall", "twine upload", "--json", "--store", "acme/widget",
                          THATCH_DB=str(target)).stdout)
    assert data["results"][0]["slug"] == "release"


def test_export_to_stdout_scopes_and_vectorless_rows(cli, source):
    detected = memory_lines(cli("export", THATCH_STORE="acme/widget").stdout)
    assert {r["store"] for r in detected} == {"acme/widget"} and len(detected) == 5
    assert all("embedding" not in r for r in detected) and detected[0]["model"] == "fake:64"
    assert [r["slug"] for r in detected] == sorted(r["slug"] for r in detected)
    only = memory_lines(cli("export", "--store", "global").stdout)
    assert [r["slug"] for r in only] == ["editor"]
    assert len(memory_lines(cli("export", "--all").stdout)) == 7
    assert cli("export", "--all", "--store", "global").exit_code == 2
    assert cli("export", "--json").exit_code == 2  # the JSON summary needs --output


def test_import_reembeds_rows_without_a_usable_vector(cli, source, tmp_path):
    dump = tmp_path / "plain.jsonl"
    assert cli("export", "--all", "--output", str(dump)).exit_code == 0
    foreign = tmp_path / "foreign.jsonl"
    assert cli("export", "--all", "--with-vectors", "--output", str(foreign),
               embedder=FakeEmbedder(64, name="other-model")).exit_code == 0
    text = foreign.read_text().splitlines()
    first = json.loads(text[0])
    first["model"] = "other-model"  # a vector of another embedding space
    second = json.loads(text[1])
    second["embedding"] = base64.b64encode(b"\0" * 4 * 32).decode()  # right space, wrong width
    foreign.write_text("\n".join([json.dumps(first), json.dumps(second), *text[2:]]) + "\n")

    counting = CountingEmbedder(64)
    report = json.loads(cli("import", str(dump), "--json", embedder=counting, THATCH_DB=str(tmp_path / "a.db")).stdout)
    assert report["embedded"] == 7 and report["kept_vectors"] == 0 and report["model"] == "fake:64"
    # Re-embedding gives exactly the vectors remember stored.
    assert [dict(r)["embedding"] for r in rows(tmp_path / "a.db")] == [dict(r)["embedding"] for r in rows(source)]

    result = cli("import", str(foreign), "--json", THATCH_DB=str(tmp_path / "b.db"))
    report = json.loads(result.stdout)
    # Another model's vector is replaced; a vector of this model with the wrong width is refused.
    assert report["embedded"] == 1 and report["kept_vectors"] == 5 and result.exit_code == EXIT_ATTENTION
    assert report["errors"] == [{"line": 2, "message": "'embedding' has 32 dimensions; fake:64 has 64"}]
    assert [dict(r)["model"] for r in rows(tmp_path / "b.db")] == ["fake:64"] * 6


def test_conflicts_are_skipped_and_reported_unless_overwrite(cli, source, tmp_path, isolated_env):
    dump = tmp_path / "dump.jsonl"
    cli("export", "--all", "--with-vectors", "--output", str(dump))
    result = cli("import", str(dump), "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0 and report["created"] == 0 and report["skipped"] == 7
    assert report["conflicts"][0] == {"line": 1, "store": "acme/widget", "slug": "login-wip"}
    assert [c["line"] for c in report["conflicts"]] == list(range(1, 8))
    plain = cli("import", str(dump))
    assert "already existed" in plain.stderr and "--overwrite" in plain.stderr

    edited = [json.loads(line) for line in dump.read_text().splitlines()]
    edited[0]["content"] = "# Login wip\n\nlogin form done"
    edited[0]["archived"] = 1
    dump.write_text("".join(json.dumps(r) + "\n" for r in edited))
    report = json.loads(cli("import", str(dump), "--overwrite", "--json").stdout)
    assert report["replaced"] == 7 and report["created"] == 0 and report["skipped"] == 0
    db = MemoryDB.open(Path(isolated_env["THATCH_DB"]))
    row = db.get("acme/widget", "login-wip", with_vector=True)
    assert row.content.endswith("login form done") and row.archived and row.embedding is not None
    # The edited row's content changed but it brought its old vector: it is kept as given.
    assert db.conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 7


def test_malformed_lines_are_reported_and_never_corrupt(cli, tmp_path, isolated_env):
    good = {"label": "Good", "content": "fine"}
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps(["a", "list"]),
        json.dumps({"content": "no label"}),
        json.dumps({"label": "bad vector", "content": "x", "embedding": "***"}),
        json.dumps({"label": "odd bytes", "content": "x", "embedding": base64.b64encode(b"abc").decode()}),
        json.dumps({"label": "bad count", "content": "x", "recall_count": "many"}),
        json.dumps({"label": "bad store", "content": "x", "store": "   "}),
        "",
        json.dumps({"label": "Also good", "content": "fine too", "store": "global", "confidence": 4}),
        json.dumps(good),  # duplicate of line 1 within the same file
    ]
    src = tmp_path / "messy.jsonl"
    src.write_text("\n".join(lines) + "\n")
    result = cli("import", str(src), "--json", THATCH_STORE="team/notes")
    report = json.loads(result.stdout)
    assert result.exit_code == EXIT_ATTENTION
    assert report["created"] == 2 and report["skipped"] == 1 and report["error_count"] == 7
    assert [e["line"] for e in report["errors"]] == [2, 3, 4, 5, 6, 7, 8]
    assert report["conflicts"] == [{"line": 11, "store": "team/notes", "slug": "good"}]
    assert "not valid JSON" in report["errors"][0]["message"] and "label" in report["errors"][2]["message"]
    conn = sqlite3.connect(isolated_env["THATCH_DB"])
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert sorted(conn.execute("SELECT store, slug, confidence FROM entries")) == [
        ("global", "also-good", 4), ("team/notes", "good", None)]
    human = cli("import", str(src))
    assert "line 2: not valid JSON" in human.stderr and human.exit_code == EXIT_ATTENTION


def test_store_override_and_stdin(cli, source, isolated_env):
    dump = cli("export", "--all").stdout
    result = cli("import", "-", "--store", "archive/2025", "--json", input=dump)
    report = json.loads(result.stdout)
    assert report["created"] == 7 and report["skipped"] == 0
    db = MemoryDB.open(Path(isolated_env["THATCH_DB"]))
    assert len(db.list(["archive/2025"], archived=None)) == 7


def test_batches_embed_once_per_batch_and_commit_per_batch(make_ctx, tmp_path):
    counting = CountingEmbedder(64)
    ctx = make_ctx(embedder=counting, THATCH_STORE="s")
    lines = [json.dumps({"label": f"note {i}", "content": f"text number {i}"}) for i in range(25)]
    seen: list[tuple[int, int | None]] = []
    outcome = transfer.import_lines(ctx, lines, batch_size=10, progress=lambda done, total: seen.append((done, total)),
                                    total=25)
    assert outcome.created == 25 and outcome.embedded == 25
    assert counting.batches == [10, 10, 5]
    assert seen[0] == (0, 25) and seen[-1] == (25, 25) and len(seen) >= 4
    ctx.close()


def test_import_without_a_model_keeps_rows_and_their_vectors(cli, source, tmp_path):
    with_vectors = tmp_path / "v.jsonl"
    cli("export", "--all", "--with-vectors", "--output", str(with_vectors))
    extra = json.dumps({"label": "New", "content": "no vector yet", "store": "s"})
    with_vectors.write_text(with_vectors.read_text() + extra + "\n")
    result = cli("import", str(with_vectors), "--json", embedder=BrokenEmbedder(), THATCH_DB=str(tmp_path / "c.db"))
    report = json.loads(result.stdout)
    assert result.exit_code == 0 and report["created"] == 8 and report["without_vector"] == 1
    assert report["kept_vectors"] == 7 and "reindex" in report["notices"][0]
    imported = {dict(r)["slug"]: dict(r) for r in rows(tmp_path / "c.db")}
    assert imported["new"]["embedding"] is None and imported["new"]["model"] is None
    assert imported["release"]["embedding"] is not None
