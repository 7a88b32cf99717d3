"""`thatch _complete KIND [--store S]`: values for shell completion, one per line.

    labels    labels of the store (with --store) or of the detected store and global
    stores    every store name
    branches  branches with memories in the store, plus the repository's local branches

Called by the generated completion scripts on every Tab press, so it must
answer within ~50 ms: stdlib, sqlite3, gitfs and the identity cache only
(no typer, rich, dulwich, numpy). It never creates the database and never
prints an error: a completion that cannot be computed is simply empty.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

KINDS = ("labels", "stores", "branches")
GLOBAL = "global"


def _parse(argv: list[str]) -> tuple[str, str | None] | None:
    if not argv or argv[0] not in KINDS:
        return None
    kind, store, rest = argv[0], None, argv[1:]
    i = 0
    while i < len(rest):
        token = rest[i]
        if token in ("--store", "-s") and i + 1 < len(rest):
            store, i = rest[i + 1], i + 2
            continue
        if token.startswith("--store="):
            store = token[len("--store="):]
        i += 1
    return kind, (store.strip() or None) if store else None


def _connect(env) -> sqlite3.Connection | None:
    from .. import paths

    path = paths.db_path(env)
    if not path.is_file():
        return None  # completion must never create the database
    from ..db import connect

    return connect(path)


def _detected_store(env, cwd: Path) -> str:
    override = (env.get("THATCH_STORE") or "").strip()
    if override:
        return override
    from .. import paths
    from ..repo import resolve_store

    return resolve_store(cwd, paths.cache_dir(env) / "repos.json")


def values(kind: str, store: str | None, env, cwd: Path) -> list[str]:
    conn = _connect(env)
    try:
        if kind == "stores":
            if conn is None:
                return [GLOBAL]
            return [r[0] for r in conn.execute("SELECT name FROM stores ORDER BY name")]
        stores = [store] if store else list(dict.fromkeys([_detected_store(env, cwd), GLOBAL]))
        marks = ",".join("?" * len(stores))
        if kind == "labels":
            if conn is None:
                return []
            rows = conn.execute(f"SELECT label FROM entries WHERE store IN ({marks}) ORDER BY label", stores)
            return list(dict.fromkeys(r[0] for r in rows))
        found: set[str] = set()
        if conn is not None:
            rows = conn.execute(
                f"SELECT DISTINCT branch FROM entries WHERE store IN ({marks}) AND branch IS NOT NULL"
                " AND branch != ''",
                stores,
            )
            found.update(r[0] for r in rows)
        from .. import gitfs

        location = gitfs.locate(cwd)
        if location is not None:
            found.update(gitfs.local_branches(location))
        return sorted(found)
    finally:
        if conn is not None:
            conn.close()


def main(argv: list[str]) -> int:
    parsed = _parse(argv)
    if parsed is None:
        sys.stderr.write(f"usage: thatch _complete {{{'|'.join(KINDS)}}} [--store STORE]\n")
        return 2
    kind, store = parsed
    try:
        found = values(kind, store, os.environ, Path.cwd())
    except Exception:
        return 0  # never break the user's shell over a completion
    # One per line: the scripts split on newlines, so labels may hold spaces.
    lines = [v for v in found if v and "\n" not in v]
    try:
        sys.stdout.write("".join(f"{v}\n" for v in lines))
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0
