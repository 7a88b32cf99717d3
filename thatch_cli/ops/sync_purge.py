"""`thatch sync purge LABEL`: take one memory off the remote for good.

The memories ref is rewritten, with a lease, as a new commit without
history whose tree holds a tombstone in the memory's place (so teammates'
next syncs forget their copies rather than share them back); the memory
stays on this machine, marked private. Clones that already fetched it keep
a copy in their git objects and their own history until they prune it:
the report says so.
"""

from __future__ import annotations

import random
import time
from typing import Any

from ..memory import jsonl
from ..storage import sync as table
from ..support.errors import NotFound, ThatchError
from ..support.slugs import slugify
from ..sync import gitconfig, hlc, records, transport, tree
from .context import Context
from .sync import Offline
from .sync_repo import locked, repository

ROUNDS = 5


class Purged:
    def __init__(self, store: str, remote: str, slug: str, label: str, commit: str, kept_private: bool) -> None:
        self.store, self.remote, self.slug, self.label = store, remote, slug, label
        self.commit, self.kept_private = commit, kept_private

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "remote": self.remote, "slug": self.slug, "label": self.label,
                "commit": self.commit, "kept_private": self.kept_private,
                "notices": [NOTICE]}


NOTICE = ("clones that already fetched it keep a copy in their git objects (and in their thatch history) until"
          " they delete it; rotate any credential it held")


def purge(ctx: Context, label: str) -> Purged:
    repo = repository(ctx, need_enabled=True)
    timeout = float(ctx.setting("sync.timeout"))
    slug = slugify(label)
    with locked(repo, timeout), tree.Git(repo.top, ctx.env) as git:
        for round_ in range(ROUNDS):
            fetched = transport.fetch(repo.top, ctx.env, repo.remote, timeout)
            if not fetched.ok:
                raise Offline(f"offline: cannot reach {repo.remote} ({fetched.reason()}); nothing was purged",
                              retryable=True)
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
                              hlc.parse(state.get("hlc")))
            clock.see(old.stamp if old else None)
            stone = records.tombstone(slug, name, gitconfig.identity(repo.top, ctx.env), clock.issue(hlc.millis_of(ctx.now())))
            commit = git.write_commit(snap, {entry.path: stone.encode()}, [], gitconfig.identity(repo.top, ctx.env),
                                      f"thatch sync purge: {name}\n\nRewritten without history by thatch sync"
                                      " purge.\n", now=int(time.time()))
            pushed = transport.push(repo.top, ctx.env, repo.remote, commit, tip, timeout)
            kind = transport.classify(pushed)
            if kind == "ok":
                git.set_ref(tree.tracking_ref(repo.remote), tip, commit)
                git.set_ref(tree.LOCAL_REF, git.ref(tree.LOCAL_REF), commit)
                with db.transaction() as conn:
                    table.set_private(conn, repo.store, slug, True)
                    table.set_state(conn, repo.store, {"base": commit, "hlc": str(clock.last)})
                return Purged(repo.store, repo.remote, slug, name, commit, db.exists(repo.store, slug))
            if kind == "offline":
                raise Offline(f"offline: cannot push to {repo.remote} ({pushed.reason()}); nothing was purged",
                              retryable=True)
            if kind != "lease":
                raise ThatchError(f"git push to {repo.remote} failed: {pushed.reason()}; nothing was purged")
            time.sleep(min(4.0, 0.2 * 2 ** round_) * random.uniform(0.5, 1.5))
    raise Offline(f"others kept pushing to {repo.remote}; nothing was purged, try again", retryable=True)
