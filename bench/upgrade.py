"""What the data-safety machinery costs on a big store: the one-time upgrade
to schema 4 (verified backup, then migration), an online backup, a restore,
and the history kept on each overwrite.

    python bench/upgrade.py [--size 100000] [--runs 5]

Builds a schema 3 database of SIZE memories with 384-dimension vectors
(schema 4 with its version set back to 3, as an older thatch left it),
then times, medians of RUNS: opening it (backup beside it, then the
upgrade), `thatch backup` and `thatch restore` through the library, and an
overwrite of one memory with and without the history triggers.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from thatch_cli.ops.backup import backup, restore  # noqa: E402
from thatch_cli.ops.context import Context  # noqa: E402
from thatch_cli.storage.memories import MemoryDB  # noqa: E402

from machine import describe  # noqa: E402

STORE = "bench/widget"
NOW = "2026-11-30T12:00:00.000Z"


def build(path: Path, size: int) -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    db = MemoryDB.open(path)
    db.ensure_store(STORE)
    with db.transaction() as conn:
        conn.executemany(
            "INSERT INTO entries (slug, store, label, content, embedding, model, created_at, updated_at)"
            " VALUES (?,?,?,?,?,?,?,?)",
            ((f"note-{i}", STORE, f"note {i}", f"# note {i}\n\nDeploy step {i} uses make target t{i % 97}.",
              rng.standard_normal(384).astype("<f4").tobytes(), "BAAI/bge-small-en-v1.5", NOW, NOW)
             for i in range(size)))
        conn.execute("UPDATE thatch_cli_meta SET value = '3' WHERE key = 'schema_version'")
    db.close()


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def overwrite_ms(path: Path, runs: int) -> float:
    db = MemoryDB.open(path)
    samples = []
    for i in range(runs * 10):
        with db.transaction() as conn:
            started = time.perf_counter()
            conn.execute("UPDATE entries SET content = ?, updated_at = ? WHERE store = ? AND slug = ?",
                         (f"# note 5\n\nrewritten {i}", f"2026-12-01T00:00:{i % 60:02d}.000Z", STORE, "note-5"))
            samples.append(time.perf_counter() - started)
    db.close()
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="thatch-upgrade-"))
    template = work / "template.db"
    build(template, args.size)
    upgrades, backups, restores = [], [], []
    for run in range(args.runs):
        db = work / f"run{run}" / "thatch.db"
        db.parent.mkdir()
        shutil.copy(template, db)
        upgrades.append(timed(lambda: MemoryDB.open(db).close()))
        ctx = Context.open(db, cwd=work)
        made = []
        backups.append(timed(lambda: made.append(backup(ctx, str(db.parent / "copy.db")))))
        restores.append(timed(lambda: restore(ctx, str(made[0].path))))
        ctx.close()
    db = work / "run0" / "thatch.db"
    with_history = overwrite_ms(db, args.runs)
    conn = MemoryDB.open(db).conn
    for name in ("thatch_cli_history_bi", "thatch_cli_history_au", "thatch_cli_history_ad"):
        conn.execute(f"DROP TRIGGER {name}")
    conn.close()
    without = overwrite_ms(db, args.runs)
    size = template.stat().st_size / 2**20
    print(f"On {describe()}; {args.size:,} memories with 384-d vectors ({size:.0f} MiB); medians of {args.runs} runs.\n")
    print("| operation | median |")
    print("|---|---:|")
    print(f"| first open of a schema 3 file: verified backup, then upgrade to schema 4 | {statistics.median(upgrades):.2f} s |")
    print(f"| `thatch backup` (VACUUM INTO, integrity check, row counts) | {statistics.median(backups):.2f} s |")
    print(f"| `thatch restore` (checks, backup of the current file, copy back) | {statistics.median(restores):.2f} s |")
    print(f"| overwrite one memory, history kept | {with_history:.3f} ms |")
    print(f"| overwrite one memory, history triggers dropped | {without:.3f} ms |")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
