"""`thatch _complete KIND [--store S]`: values for shell completion, one per line.

    stores    every store name
    labels    labels of the store (with --store) or of the detected store and global
    branches  branches with memories in the store, plus the repository's local branches

The kinds are the fields memory/fields.py marks `complete`: each offers the values
of its column in the stores in scope (every store's name, for stores).

Called by the generated completion scripts on every Tab press, so it must
answer within ~50 ms: stdlib, sqlite3, gitfs and the identity cache only
(no typer, rich, dulwich, numpy). It never creates the database and never
prints an error: a completion that cannot be computed is simply empty.
"""

from __future__ import annotations

import os
import sys

from ..memory.fields import COMPLETED, items
from ..support.validate import control_characters

KINDS = tuple(COMPLETED)


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


def values(kind: str, store: str | None, env, cwd: str) -> list[str]:
    from ..location import scope
    from ..storage import fastread
    from ..support import paths

    # Read-only and never created, upgraded or waited on for long: a Tab press must not freeze.
    conn = fastread.open_readonly(paths.db_file(env), timeout=0.2)
    try:
        if kind == "stores":
            return fastread.store_names(conn) if conn is not None else [scope.GLOBAL]
        place = scope.here(env, cwd)
        stores = [store] if store else scope.default_scope(place)
        field = COMPLETED[kind]
        found = fastread.values(conn, field.column, stores) if conn is not None else []
        if field.kind == "list":  # each stored text holds several items
            found = sorted({item for stored in found for item in items(stored)})
        if kind == "branches" and place.repo is not None:  # branches without memories yet too
            found = sorted(set(found).union(scope.local_branches(place.repo)))
        return found
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
        found = values(kind, store, os.environ, os.getcwd())
    except Exception:
        return 0  # never break the user's shell over a completion
    # One per line: the scripts split on newlines, so labels may hold spaces.
    # A value with a control character (a crafted HEAD, a row written by
    # hand) is no name to type, and a terminal listing candidates would obey it.
    lines = [v for v in found if v and not control_characters(v)]
    try:
        sys.stdout.write("".join(f"{v}\n" for v in lines))
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0
