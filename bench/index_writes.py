"""Cost of deleting and overwriting a memory in a big store: the FTS index
with its row map (schema 3) against the index alone (schema 2's triggers,
which found a memory's index row with a full scan).

    python bench/index_writes.py [--sizes 10000 100000] [--runs 21]

Builds one database per size (rows without vectors, inserted through the
schema's triggers), then times `MemoryDB.delete` and an overwriting
`MemoryDB.save` of random memories; the same database then gets schema 2's
index triggers back and is timed again, in the same run. Prints medians,
and how long opening that schema 2 database takes (the one-time re-index).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from thatch_cli.memory.records import Memory  # noqa: E402
from thatch_cli.storage import schema as dbmod  # noqa: E402
from thatch_cli.storage.memories import MemoryDB  # noqa: E402

from machine import describe  # noqa: E402

STORE = "bench/widget"
NOW = "2026-11-30T12:00:00.000Z"


def build(path: Path, size: int) -> MemoryDB:
    db = MemoryDB.open(path)
    db.ensure_store(STORE)
    with db.transaction() as conn:
        conn.executemany(
            "INSERT INTO entries (slug, store, label, content, created_at, updated_at) VALUES (?,?,?,?,?,?)",
            ((f"note-{i}", STORE, f"note {i}", f"# note {i}\n\nDeploy step {i} uses make target t{i % 97}.", NOW, NOW)
             for i in range(size)))
    return db


def back_to_schema_2(db: MemoryDB) -> None:
    with db.transaction() as conn:
        for name in ("entries_fts_ai", "entries_fts_ad", "entries_fts_au"):
            conn.execute(f"DROP TRIGGER {name}")
        for statement in dbmod.split(dbmod._migrations()[1]):
            if statement.startswith("CREATE TRIGGER") and "entries_fts_a" in statement:
                conn.execute(statement)
        conn.execute("DROP TABLE thatch_cli_fts_rows")
        conn.execute("UPDATE thatch_cli_meta SET value = '2' WHERE key = 'schema_version'")


def timed(db: MemoryDB, size: int, runs: int, rng: random.Random) -> tuple[float, float]:
    deletes, overwrites = [], []
    for _ in range(runs):
        slug = f"note-{rng.randrange(size)}"
        memory = db.get(STORE, slug)
        if memory is None:
            continue
        started = time.perf_counter()
        db.save(Memory(store=STORE, slug=slug, label=memory.label, content=memory.content + " (edited)",
                       created_at=NOW, updated_at=NOW), overwrite=True, archived=None)
        overwrites.append(time.perf_counter() - started)
        started = time.perf_counter()
        db.delete(STORE, slug)
        deletes.append(time.perf_counter() - started)
    return statistics.median(deletes), statistics.median(overwrites)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    print(f"On {describe()}; medians of {args.runs} runs.\n")
    print("| memories | index triggers | delete | overwrite |")
    print("|---:|---|---:|---:|")
    upgrades = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            db = build(Path(tmp) / "bench.db", size)
            rng = random.Random(size)
            results = {"with the row map (schema 3)": timed(db, size, args.runs, rng)}
            back_to_schema_2(db)
            results["full scan (schema 2)"] = timed(db, size, args.runs, rng)
            db.close()
            started = time.perf_counter()
            MemoryDB.open(Path(tmp) / "bench.db").close()
            upgrades.append((size, time.perf_counter() - started))
        for name, (delete, overwrite) in results.items():
            print(f"| {size:,} | {name} | {delete * 1000:.2f} ms | {overwrite * 1000:.2f} ms |")
    print()
    for size, seconds in upgrades:
        print(f"Opening a schema 2 database of {size:,} memories (one-time re-index): {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
