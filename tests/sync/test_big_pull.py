"""A big pull never holds the team up: what came in is searchable by
keywords as soon as its rows are written, and it is embedded after the sync
lock is released, so another sync meanwhile runs instead of failing."""

from __future__ import annotations

import threading
from pathlib import Path

from thatch_cli.model.embeddings import FakeEmbedder
from thatch_cli.ops.context import Context

from helpers import run_main


def import_runbooks(clone, count: int, *, tagged: bool = False) -> None:
    """`count` memories "Runbook i" imported on `clone` from a JSONL file
    (tagged: some with tags), not yet synced."""
    def line(i: int) -> str:
        tags = f', "tags": {["ops", "keys"][: i % 3]!r}'.replace("'", '"') if tagged else ""
        return f'{{"label": "Runbook {i}", "content": "# Runbook {i}\\\\n\\\\nRotate zebra{i} keys."{tags}}}\n'

    source = Path(clone.path) / "notes.jsonl"
    source.write_text("".join(line(i) for i in range(count)))
    clone.ok("import", str(source))


class _Slow(FakeEmbedder):
    """Embeds only once the test lets it, after saying it started."""

    def __init__(self) -> None:
        super().__init__(64)
        self.started, self.release = threading.Event(), threading.Event()

    def embed_passages(self, texts):
        self.started.set()
        assert self.release.wait(30)
        return super().embed_passages(texts)


def test_a_second_sync_runs_while_the_first_embeds(team):
    ann, bob = team(2)
    lines = "".join(f'{{"label": "Runbook {i}", "content": "# Runbook {i}\\\\n\\\\nRotate zebra{i} keys."}}\n'
                    for i in range(300))
    source = Path(ann.path) / "notes.jsonl"
    source.write_text(lines)
    ann.ok("import", str(source))
    ann.sync()
    slow = _Slow()
    first: dict = {}

    def pull() -> None:
        ctx = Context(env=bob.env, cwd=bob.path, clock=bob.clock, embedder_factory=lambda _env: slow)
        first["result"] = run_main(["sync", "--json"], ctx)

    thread = threading.Thread(target=pull)
    thread.start()
    try:
        assert slow.started.wait(30)
        # While the first sync embeds: keyword search finds what came in, and another sync is not locked out.
        found = bob.run("recall", "zebra7", "--mode", "lexical", "--json").json()["results"]
        assert [hit["label"] for hit in found][:1] == ["Runbook 7"]
        second = bob.run("sync", "--json", THATCH_SYNC_TIMEOUT="2")
        assert second.exit_code == 0, second
    finally:
        slow.release.set()
        thread.join(60)
    assert first["result"].exit_code == 0 and first["result"].json()["pulled"]["created"] == 300
    assert all(m["has_vector"] for m in (bob.memory("Runbook 0"), bob.memory("Runbook 299")))


def test_embedding_progress_shows_on_a_terminal_and_not_in_a_pipe(team):
    """A pull of more than one batch says how far embedding got: a bar on a
    terminal; piped, no bar and no escape codes."""
    import subprocess
    import sys

    from thatch_cli.sync.applying import BATCH

    from helpers import thatch_pty

    ann, bob, cat = team(3)
    count = BATCH + 44
    import_runbooks(ann, count)
    ann.sync()
    fake = {"THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0"}
    code, screen = thatch_pty(["sync"], env={**bob.env, **fake}, cwd=bob.path)
    assert code == 0, screen
    assert "Embedding incoming memories" in screen and f"/{count}" in screen
    piped = subprocess.run([sys.executable, "-m", "thatch_cli", "sync"], env={**cat.env, **fake}, cwd=cat.path,
                           capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0, piped.stderr
    assert f"{count} new" in piped.stdout + piped.stderr or str(count) in piped.stdout, piped.stdout
    assert "Embedding incoming memories" not in piped.stderr and "\x1b[" not in piped.stderr + piped.stdout
    assert all(bob.memory(f"Runbook {i}")["has_vector"] for i in (0, count - 1))


def _index(db: Path) -> tuple[list[tuple], int, str]:
    """(store, slug, label, content) of every memory as the keyword index
    holds it through the row map, the index's row count, the insert trigger."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO entries_fts (entries_fts) VALUES ('integrity-check')")
        mapped = conn.execute("SELECT f.store, f.slug, f.label, f.content FROM thatch_cli_fts_rows AS r"
                              " JOIN entries_fts AS f ON f.rowid = r.fts_rowid AND f.store = r.store"
                              " AND f.slug = r.slug ORDER BY f.store, f.slug").fetchall()
        total = conn.execute("SELECT count(*) FROM entries_fts").fetchone()[0]
        trigger = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'entries_fts_ai'").fetchone()[0]
    return mapped, total, trigger


def test_a_big_pull_indexes_keywords_as_the_insert_trigger_would(team):
    """A pull of many new memories indexes them in one statement at the end
    (storage/bulkindex.py): the index then holds exactly each memory's label
    and text, an index row left mapped to an incoming key is gone as the
    trigger would drop it, and the trigger is back, as it was, for later writes."""
    import sqlite3

    from thatch_cli.storage.bulkindex import BATCH
    from thatch_cli.storage.schema import FTS_INSERT_TRIGGER

    ann, bob = team(2)
    count = BATCH * 2
    import_runbooks(ann, count)
    ann.sync()
    bob.ok("remember", "Deploy day", "Deploys go out on tuesdays")
    store = bob.memory("Deploy day")["store"]
    with sqlite3.connect(bob.db) as conn:  # an index row still mapped to a key that comes in
        rowid = conn.execute("INSERT INTO entries_fts (slug, store, label, content) VALUES"
                             " ('runbook-5', ?, 'Runbook 5', 'stale walrus')", (store,)).lastrowid
        conn.execute("INSERT INTO thatch_cli_fts_rows (store, slug, fts_rowid) VALUES (?, 'runbook-5', ?)",
                     (store, rowid))
    assert bob.sync()["pulled"]["created"] == count
    bob.ok("remember", "Backups", "Backups run nightly")
    with sqlite3.connect(bob.db) as conn:
        rows = conn.execute("SELECT store, slug, label, content FROM entries ORDER BY store, slug").fetchall()
    mapped, total, trigger = _index(bob.db)
    assert mapped == rows and total == len(rows) == count + 2
    assert trigger == FTS_INSERT_TRIGGER
    for word, label in (("zebra77", "Runbook 77"), ("nightly", "Backups")):
        found = bob.run("recall", word, "--mode", "lexical", "--json").json()["results"]
        assert [hit["label"] for hit in found][:1] == [label]
    assert bob.run("recall", "walrus", "--mode", "lexical", "--json").json()["results"] == []


def test_a_big_pull_writes_rows_anchors_and_marks_as_one_memory_at_a_time_would(team):
    """The rows of a big pull are written in a few prepared statements
    (more memories than one statement's parameters), beside an update of a
    memory the puller had: every row, anchor and provenance mark is what
    the other clone shared, and the update keeps its history."""
    import sqlite3

    from thatch_cli.memory.records import SYNCED_FIELDS
    from thatch_cli.storage.sync import _CHUNK

    ann, bob = team(2)
    ann.push_file("config.py", "".join(f"key_{i} = {i}\n" for i in range(1, 31)))
    ann.ok("remember", "Shared rule", "first version", "--tag", "ops")
    ann.sync()
    bob.sync()
    count = _CHUNK + 20
    import_runbooks(ann, count, tagged=True)
    ann.ok("anchor", "Runbook 3", "config.py:5-14")
    ann.ok("anchor", "Runbook 3", "config.py:20-25")
    ann.ok("anchor", f"Runbook {count - 1}", "config.py")
    ann.ok("remember", "Shared rule", "second version", "--overwrite")
    ann.sync()
    pulled = bob.sync()["pulled"]
    assert pulled == {"created": count, "updated": 1, "deleted": 0}

    def state(clone) -> tuple[list, list]:
        with sqlite3.connect(clone.db) as conn:
            rows = conn.execute(f"SELECT slug, {', '.join(SYNCED_FIELDS)} FROM entries ORDER BY slug").fetchall()
            anchors = conn.execute("SELECT slug, path, start_line, end_line, blob FROM thatch_cli_anchors"
                                   " ORDER BY slug, path, start_line").fetchall()
        return rows, anchors

    assert state(bob) == state(ann)
    assert [(a["start"], a["end"]) for a in bob.memory("Runbook 3")["anchors"]] == [(5, 14), (20, 25)]
    with sqlite3.connect(bob.db) as conn:
        marks = conn.execute("SELECT count(*), sum(incoming), sum(unreviewed), count(DISTINCT author)"
                             " FROM thatch_cli_sync_marks").fetchone()
        versions = [r[0] for r in conn.execute("SELECT content FROM thatch_cli_history WHERE memory_slug ="
                                                " 'shared-rule' ORDER BY version")]
    assert marks == (count + 1, count + 1, count + 1, 1)
    assert versions == ["# Shared rule\n\nfirst version"]
    assert bob.memory("Shared rule")["tags"] == ["ops"]
