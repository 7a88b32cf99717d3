"""A big pull never holds the team up: what came in is searchable by
keywords as soon as its rows are written, and it is embedded after the sync
lock is released, so another sync meanwhile runs instead of failing."""

from __future__ import annotations

import threading
from pathlib import Path

from thatch_cli.model.embeddings import FakeEmbedder
from thatch_cli.ops.context import Context

from helpers import run_main


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
    lines = "".join(f'{{"label": "Runbook {i}", "content": "# Runbook {i}\\\\n\\\\nRotate zebra{i} keys."}}\n'
                    for i in range(count))
    source = Path(ann.path) / "notes.jsonl"
    source.write_text(lines)
    ann.ok("import", str(source))
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
