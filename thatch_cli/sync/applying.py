"""Writing what a merge decided: the next commit of the memories ref
(dulwich), and the store's rows, marks and state in one transaction.

A memory that changed here after the merge read it is left as it is now
(the next sync shares it); everything else that came in is written as an
import writes a line (MemoryDB.write_row, so the history keeps what it
replaces), embedded first, with its anchors as they came, and marked with its
author and as unreviewed."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..memory.records import SYNCED_FIELDS
from ..storage import anchors as anchor_table
from ..storage import bulkindex
from ..storage import sync as table
from ..support.errors import ModelUnavailable
from ..support.textsafe import one_line
from . import hlc, records
from .merge import Plan
from .reading import cache_entry
from .round import Outcome, Round
from .tree import LOCAL_REF, Snapshot

if TYPE_CHECKING:
    from ..ops.context import Context


def commit(step: Round, snap_remote: Snapshot, plan: Plan, remote_tip: str | None, teach: set[str]) -> str:
    """The merged tree as a commit on the remote's tip only, set as the
    local refs/thatch/memories. Never on the last synced commit as well when
    the remote's history lost it: after a purge (or a forced push) that
    would publish again what was taken off. `teach`: purged text keys the
    remote's purged.json lacks (the union is written)."""
    import hashlib

    git = step.git
    blobs: dict[str, bytes | None] = {}
    for slug, rec in plan.tree.items():
        data = blobs[records.path_of(slug)] = rec.encode()
        # Known from now on (reading.py's cache): the next sync need not read it back.
        sha = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        step.shared.cache[sha] = cache_entry(rec)
        step.shared.seen.add(sha)
    if records.FORMAT_PATH not in snap_remote.others:
        blobs[records.FORMAT_PATH] = (json.dumps(records.FORMAT, indent=2) + "\n").encode()
    if teach:
        blobs[records.PURGED_PATH] = records.encode_purged(step.purged)
    parents = [remote_tip] if remote_tip else []
    counts = step.pushed
    message = (f"thatch sync: {counts['created']} new, {counts['updated']} changed, {counts['deleted']} forgotten"
               f"\n\nMemories of {step.repo.store}, shared by thatch sync.\n")
    sha = git.write_commit(snap_remote, blobs, parents, step.git.identity(), message,
                           now=int(time.time()))
    git.set_ref(LOCAL_REF, git.ref(LOCAL_REF), sha)
    return sha


# The daemon embeds one request at a time: a small batch lets a prompt's query or
# a teammate's next sync in between (at most one batch's wait), and embeds as
# fast as 256 at once on a CPU (measured: 197 vs 191 memories/s with MiniLM).
BATCH = 32
CONTENT = SYNCED_FIELDS.index("content")  # in a row's state as the merge read it


def embed(ctx: Context, store: str, written: list[tuple[str, str]], outcome: Outcome,
          progress: Callable[[int, int | None], None] | None) -> None:
    """Vectors for the incoming memories whose text is new here, in batches
    after their rows are written (keyword recall finds them at once) and
    after the sync lock is released (the daemon embeds when it runs); a
    memory edited meanwhile keeps its own. No model: a notice, and `thatch
    reindex` embeds them later."""
    from ..storage import vectors

    db = ctx.db()
    for start in range(0, len(written), BATCH):
        if progress is not None:
            progress(start, len(written))
        batch = written[start:start + BATCH]
        try:
            embedded = ctx.engine().embed_passages([content for _, content in batch])
        except ModelUnavailable as exc:
            outcome.notices.append(f"incoming memories saved without vectors ({exc.message}); keyword recall"
                                   " finds them, 'thatch reindex' embeds them once the model loads")
            return
        with db.transaction():
            for (slug, content), blob in zip(batch, embedded.blobs):
                vectors.set_vector(db, store, slug, content, blob, embedded.model)
    if progress is not None:
        progress(len(written), len(written))


def apply(step: Round, plan: Plan, new_tip: str | None, clock: hlc.Clock) -> None:
    ctx, db, store = step.ctx, step.db, step.repo.store
    review = bool(ctx.setting("sync.review"))
    now = ctx.now()
    written: list[tuple[str, str]] = []
    fresh = sum(before is None for _, before in plan.apply)
    with db.transaction() as conn, bulkindex.indexed_at_end(conn, store, fresh) as inserted:
        db.ensure_store(store)
        found = table.current(conn, store, [record.slug for record, _ in plan.apply])
        new_rows: list[dict[str, Any]] = []
        anchored: list[tuple[str, list[tuple[Any, ...]]]] = []
        authors: list[tuple[str, str | None]] = []
        for record, before in plan.apply:
            if found.get(record.slug) != before:
                step.outcome.notices.append(f"{one_line(record.label)!r} changed here during the sync; the next"
                                            " sync shares this version")
                continue
            fields = record.fields
            if fields is None:  # a tombstone
                table.delete(conn, store, record.slug)
                continue
            values = {"slug": record.slug, "store": store, **fields}
            anchors = values.pop("anchors", None) or []
            if before is None or before[CONTENT] != fields["content"]:
                values["embedding"] = values["model"] = None
                written.append((record.slug, fields["content"]))
            if before is None:  # written below, all in one prepared statement
                new_rows.append(values)
                inserted.append(record.slug)
            elif not db.write_row(values, replace=True):
                inserted.append(record.slug)
            anchored.append((record.slug, [tuple(a[k] for k in records.ANCHOR_KEYS) for a in anchors]))
            # Whatever the file says about its author (anyone who can push can
            # write the user's own name): what arrives here is a teammate's.
            authors.append((record.slug, record.author))
        # After every row is written: the entries triggers reset a memory's marks and anchors first.
        table.insert_new(conn, new_rows)
        anchor_table.write_many(conn, store, anchored)
        table.set_incoming(conn, store, authors, review)
        for loser in plan.losers:
            table.keep_version(conn, records.values_of(loser, store), "conflict", now)
        table.set_state(conn, store, {"base": new_tip, "hlc": str(clock.last),
                                      "purged": records.encode_purged(step.purged).decode() if step.purged else None,
                                      "since": table.state(conn, store).get("since") or now})
    step.shared.written.extend(written)
