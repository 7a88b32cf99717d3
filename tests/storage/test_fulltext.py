"""The keyword ranking's arithmetic holds for any counts, and a hybrid
recall running while another process writes never fails (it once raised
`math domain error` when the entry count and a term's count came from
different moments)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

from thatch_cli.ops.recall import peek
from thatch_cli.ops.remember import remember
from thatch_cli.storage import fulltext


def test_query_weight_is_finite_for_counts_from_different_moments(make_ctx, monkeypatch):
    with make_ctx(THATCH_STORE="acme/widget") as ctx:
        for i in range(5):
            remember(ctx, f"deploys go out on tuesdays, note {i}", f"Deploy {i}")
        db = ctx.db()
        phrases = ['"deploys"', '"tuesdays"', '"nowhere"']
        honest = fulltext.query_weight(db, phrases)
        assert math.isfinite(honest) and honest > 0
        # A total smaller than a term's count (rows added between the two reads), or zero.
        for total in (0, 1, 3):
            monkeypatch.setattr(db, "count", lambda stores=None, total=total: total)
            weight = fulltext.query_weight(db, phrases)
            assert math.isfinite(weight) and weight > 0


WRITER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
end = time.monotonic() + float(sys.argv[2])
i = 0
while time.monotonic() < end:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO entries (slug, store, label, content, created_at, updated_at) VALUES "
                 "(?, 'acme/widget', ?, ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                 (f"w{i}", f"W {i}", f"# W {i}\\n\\ndeploys and releases {i}"))
    if i % 3 == 0:
        conn.execute("DELETE FROM entries WHERE slug = ?", (f"w{i - 1}",))
    conn.execute("COMMIT")
    i += 1
"""


def test_hybrid_recall_while_another_process_writes(make_ctx):
    with make_ctx(THATCH_STORE="acme/widget") as ctx:
        remember(ctx, "deploys go out on tuesdays", "Deploy days")
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(ctx.db_path), "1.5"], env=dict(os.environ))
        try:
            rounds, end = 0, time.monotonic() + 1.0
            while time.monotonic() < end:
                found = peek(ctx, "deploys releases tuesdays", floor=0)
                assert found.results and all(0 <= r.score <= 1 for r in found.results)
                rounds += 1
        finally:
            assert writer.wait(timeout=30) == 0
        assert rounds > 10
