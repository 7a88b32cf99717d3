"""`thatch sync purge LABEL`: take one memory off the remote for good.

The memories ref is rewritten, with a lease, as a new commit without
history whose tree holds a tombstone in the memory's place (so teammates'
next syncs forget their copies rather than share them back); the memory
stays on this machine, marked private. The sha1 of every text of it this
machine knows goes into the ref's purged.json (tombstones of content), so
no teammate's sync publishes that text again. Clones that already fetched
it keep a copy in their git objects and their own history until they
prune it: the report says what each teammate must do.
"""

from __future__ import annotations

import random
import time
from typing import Any

from ..memory import jsonl
from ..ops.context import Context
from ..storage import sync as table
from ..support.errors import NotFound, Refused
from ..support.slugs import slugify
from . import hlc, records, transport, tree
from .repo import locked, synced
from .run import Offline, failure

ROUNDS = 5


class Purged:
    def __init__(self, store: str, remote: str, slug: str, label: str, commit: str, kept_private: bool) -> None:
        self.store, self.remote, self.slug, self.label = store, remote, slug, label
        self.commit, self.kept_private = commit, kept_private

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "remote": self.remote, "slug": self.slug, "label": self.label,
                "commit": self.commit, "kept_private": self.kept_private,
                "notices": notices(self.remote)}


def notices(remote: str) -> list[str]:
    return [f"each teammate: run 'thatch sync' (their copy is forgotten and its text is never shared again), then"
            f" 'git fetch --prune {remote} && git reflog expire --expire=now --all && git gc --prune=now' to delete"
            " the old objects from their clone",
            "clones that already fetched it keep a copy in their git objects (and in their thatch history) until"
            " they do; forks, backups and the server's own caches are out of reach: rotate any credential it held"]


def _texts(ctx: Context, store: str, slug: str, old: records.Record | None) -> set[str]:
    """The text keys of every version of the memory this machine knows."""
    from ..storage import history

    db = ctx.db()
    texts = [v["content"] for v in history.versions(db.conn, store, slug)]
    row = db.get(store, slug)
    if row is not None:
        texts.append(row.content)
    keys = {records.text_key(t) for t in texts if t}
    if old is not None and old.text_key:
        keys.add(old.text_key)
    return keys


def purge(ctx: Context, label: str) -> Purged:
    repo = synced(ctx)
    timeout, stall = float(ctx.setting("sync.timeout")), float(ctx.setting("sync.stall"))
    slug = slugify(label)
    with locked(repo, timeout), tree.Git(repo.top, ctx.env) as git:
        for round_ in range(ROUNDS):
            fetched = transport.fetch(repo.top, ctx.env, repo.remote, timeout, stall)
            if not fetched.ok:
                raise failure(transport.classify(fetched), fetched, repo, "nothing was purged")
            tip = git.ref(tree.tracking_ref(repo.remote))
            snap = git.snapshot(tip)
            entry = snap.memories.get(slug) or snap.memories.get(label)
            if entry is None:
                raise NotFound(f"the memories ref of {repo.remote} holds no memory labelled {label!r}",
                               label=label, remote=repo.remote)
            slug = records.slug_of(entry.path) or slug
            data = git.blobs([entry.sha]).get(entry.sha, b"")
            try:
                old = records.parse(entry.path, data, ctx.now())
                name = old.label
            except jsonl.Invalid:  # a file thatch cannot read is purged all the same
                old, name = None, label
            db = ctx.db()
            state = table.state(db.conn, repo.store)
            clock = hlc.Clock(table.node_id(db.conn, random.getrandbits(40).to_bytes(5, "big").hex()),
                              hlc.parse(state.get("hlc")), hlc.millis_of(ctx.now()))
            clock.see(old.stamp if old else None)
            git.anonymous = f"thatch-{clock.node}"
            stone = records.tombstone(slug, name, git.identity(),
                                      clock.issue(hlc.millis_of(ctx.now())))
            from .reading import purged_keys

            purged = purged_keys(git, snap, state.get("purged")) | _texts(ctx, repo.store, slug, old)
            files = {entry.path: stone.encode(), records.PURGED_PATH: records.encode_purged(purged)}
            commit = git.write_commit(snap, files, [], git.identity(),
                                      f"thatch sync purge: {name}\n\nRewritten without history by thatch sync"
                                      " purge.\n", now=int(time.time()))
            pushed = transport.push(repo.top, ctx.env, repo.remote, commit, tip, timeout, stall)
            kind = transport.classify(pushed)
            if kind == "ok":
                git.set_ref(tree.tracking_ref(repo.remote), tip, commit)
                git.set_ref(tree.LOCAL_REF, git.ref(tree.LOCAL_REF), commit)
                with db.transaction() as conn:
                    table.set_private(conn, repo.store, slug, True)
                    table.set_state(conn, repo.store, {"base": commit, "hlc": str(clock.last),
                                                       "purged": records.encode_purged(purged).decode()})
                return Purged(repo.store, repo.remote, slug, name, commit, db.exists(repo.store, slug))
            if kind in ("denied", "refused"):
                raise Refused(f"{repo.remote} refused the rewrite ({pushed.reason()}): purging needs the right to"
                              " force-push refs/thatch/memories; nothing was purged", remote=repo.remote)
            if kind != "lease":
                raise failure(kind, pushed, repo, "nothing was purged")
            time.sleep(min(4.0, 0.2 * 2 ** round_) * random.uniform(0.5, 1.5))
    raise Offline(f"others kept pushing to {repo.remote}; nothing was purged, try again", retryable=True)
