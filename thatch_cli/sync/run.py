"""`thatch sync`: share this repository's store through its own git remote.

One round: fetch the remote's memories ref (the user's `git`), merge it with
the store per memory (sync/merge.py) against the merge base of the last
synced commit, write what came in (embedded, marked with its author and as
unreviewed), commit the merged tree (dulwich) and push it with a lease on
the tip that was merged. A lost lease (someone pushed meanwhile) means
another round after a jittered back-off; one that keeps losing defers the
push to the next sync, and loses nothing: the store and the local ref are
the queue. The store's state (base commit, clock) is written in the same
transaction as the memories it describes.

Only the repository's own store is shared: never global, never a memory
marked private, never one that looks like it holds a credential (unless
allowed), and branch-scoped memories only with sync.branches (or once a
teammate shared them).
"""

from __future__ import annotations

import errno
import json
import os
import random
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..ops.context import Context
from ..storage import sync as table
from ..support.errors import DiskFull, InvalidInput, NotFound, Refused, ThatchError, Unavailable
from . import hlc, merge, transport, tree
from .repo import SyncedRepository, locked, synced
from .round import Outcome, Round, Shared, counts
from .tree import Snapshot

MAX_ROUNDS = 6


class Offline(Unavailable):
    """The remote cannot be reached now; nothing was lost, sync again later."""

    code = "offline"


def sync(ctx: Context, *, dry_run: bool = False, allow: Iterable[str] = (), background: bool = False,
         fetch: bool = True, push: bool | None = None,
         progress: Callable[[int, int | None], None] | None = None) -> Outcome:
    """One sync of the repository's store (see the module doc). `fetch`
    False merges what git already fetched (the git hook); `push` None pushes
    unless the hook asked (then the sync.auto_push setting decides).
    What came in is searchable by keywords as soon as its rows are written;
    it is embedded after the sync lock is released (`progress` is told how
    far), so another sync never waits for the model."""
    repo = synced(ctx)
    outcome = Outcome(repo, dry_run)
    allowed = _allowed(ctx, repo.store, allow)
    timeout = float(ctx.setting("sync.timeout"))
    stall = float(ctx.setting("sync.stall"))
    if push is None:
        push = fetch or bool(ctx.setting("sync.auto_push"))
    from .reading import load_cache, save_cache

    shared = Shared(allowed, timeout, stall, load_cache(repo.common_dir))
    try:
        with locked(repo, timeout), tree.Git(repo.top, ctx.env) as git:
            try:
                outcome = _rounds(ctx, git, repo, outcome, shared, fetch=fetch, push=push, background=background,
                                  dry_run=dry_run)
            finally:
                save_cache(repo.common_dir, shared.cache, shared.seen, shared.parsed)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise DiskFull(f"no space left to write under {repo.common_dir} ({exc.strerror}): free some space and sync"
                       " again; nothing was lost", remote=repo.remote) from None
    if shared.written:
        from .applying import embed

        embed(ctx, repo.store, shared.written, outcome, progress)
    return outcome


def _rounds(ctx: Context, git: tree.Git, repo: SyncedRepository, outcome: Outcome, shared: Shared, *, fetch: bool,
            push: bool, background: bool, dry_run: bool) -> Outcome:
    """Fetch, merge, commit, push, until the push's lease holds. With local
    changes to push, the first round skips the fetch and pushes what merges
    with the tip git fetched last (the lease checks that the remote is still
    there): when nobody pushed meanwhile there is nothing to fetch, and one
    round trip to the server is saved. Otherwise the lease loses and the
    next round fetches."""
    timeout, stall = shared.timeout, shared.stall
    tracking = tree.tracking_ref(repo.remote)
    optimistic = fetch and push and not dry_run and git.ref(tracking) is not None
    declined: str | None = None
    guessed: str | None = None  # the tip the first round merged and had nothing to push to
    for round_ in range(MAX_ROUNDS + optimistic):
        outcome.rounds = round_ + 1 - optimistic if round_ else 1
        first_guess = optimistic and round_ == 0
        if (fetch or round_) and not first_guess:
            fetched = transport.fetch(repo.top, ctx.env, repo.remote, timeout, stall)
            if not fetched.ok:
                return _failed(ctx, outcome, repo, fetched, background)
            if guessed is not None and git.ref(tracking) == guessed:
                # Nobody pushed since the tip the first round merged: a second merge would change nothing.
                outcome.status = _settled(outcome, dry_run)
                break
            guessed = None
        remote_tip = git.ref(tracking)
        outcome.held, outcome.skipped = [], []
        if remote_tip and git.has(remote_tip) and git.kind(remote_tip) != "commit":
            # Anyone who can push can point the ref at anything: read nothing
            # from it, and let the push (leased on it) put a commit back.
            outcome.skipped.append({"path": tree.LOCAL_REF.decode(), "reason": f"points at a {git.kind(remote_tip)},"
                                    " not a commit; nothing was read from it"})
        step = Round(ctx, git, repo, remote_tip, outcome, shared)
        new_tip = merge_round(step, dry_run)
        outcome.commit = new_tip
        if dry_run or not push or declined or new_tip is None or new_tip == remote_tip:
            if first_guess:
                guessed = remote_tip
                continue  # nothing of ours to push: fetch what others pushed
            outcome.status = _settled(outcome, dry_run)
            break
        pushed = transport.push(repo.top, ctx.env, repo.remote, new_tip, remote_tip, timeout, stall)
        kind = transport.classify(pushed)
        if kind == "ok":
            git.set_ref(tracking, remote_tip, new_tip)
            outcome.pushed = step.pushed
            outcome.status = "synced"
            break
        if kind in ("denied", "refused"):
            why = "the server declined the push" if kind == "refused" else "you may fetch but not push"
            declined = (f"pull-only: {why} ({pushed.reason()}); your memories are merged here and stay here: ask"
                        f" whoever runs {repo.remote} for push rights, or keep syncing to read")
            if first_guess:
                continue  # still fetch and merge what others pushed
            break
        if kind != "lease":
            return _failed(ctx, outcome, repo, pushed, background)
        if not first_guess:
            time.sleep(min(8.0, 0.2 * 2 ** round_) * random.uniform(0.5, 1.5))
    else:
        outcome.status = "deferred"
        outcome.pushed = counts()
        outcome.notices.append(f"lease lost {MAX_ROUNDS} times: others kept pushing to {repo.remote}; your changes"
                               " are merged here and the next sync pushes them")
    if declined:
        outcome.status = "pull-only"
        outcome.pushed = counts()
        outcome.notices.append(declined)
    _record(ctx, repo.store, outcome)
    return outcome


def _settled(outcome: Outcome, dry_run: bool) -> str:
    if dry_run:
        return "dry run"
    return "pulled" if any(outcome.pulled.values()) else "up to date"


def failure(kind: str, result: transport.GitResult, repo: SyncedRepository, kept: str) -> ThatchError:
    """The error a failed fetch or push means, named for what it is, with
    what to do; `kept` says what became of the user's memories."""
    remote, reason = repo.remote, result.reason()
    if kind == "disk_full" or (kind != "auth" and _no_space(repo.common_dir)):
        return DiskFull(f"no space left under {repo.common_dir} ({reason}): free some space and sync again; {kept}",
                        remote=remote)
    if kind in ("auth", "denied"):
        return Refused(f"{remote} does not accept this machine's credentials ({reason}): check the ssh key or"
                       f" token ('git fetch {remote}' shows the same); {kept}", remote=remote)
    if result.stalled:
        return Offline(f"offline: {remote} stopped answering ({reason}); {kept}", retryable=True, remote=remote)
    return Offline(f"offline: cannot reach {remote} ({reason}); {kept}", retryable=True, remote=remote)


def _no_space(path: Path) -> bool:
    """Whether the disk holding `path` is (all but) full: git does not always
    say so (a ref it cannot write is "unable to update local ref")."""
    try:
        found = os.statvfs(path)
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < 1 << 20


def _failed(ctx: Context, outcome: Outcome, repo: SyncedRepository, result: transport.GitResult,
            background: bool) -> Outcome:
    error = failure(transport.classify(result), result, repo, "your memories are kept here and sync next time")
    if not background:
        raise error
    outcome.status = "offline" if isinstance(error, Offline) else error.code
    outcome.notices.append(error.message)
    _record(ctx, repo.store, outcome)
    return outcome


def _record(ctx: Context, store: str, outcome: Outcome) -> None:
    if outcome.dry_run:
        return
    summary = {"at": ctx.now(), "status": outcome.status, "pulled": outcome.pulled, "pushed": outcome.pushed,
               "conflicts": len(outcome.conflicts), "held": len(outcome.held)}
    db = ctx.db()
    with db.transaction() as conn:
        table.set_state(conn, store, {"last": json.dumps(summary)})
        outcome.unreviewed = len(table.unreviewed(conn, store))


def _allowed(ctx: Context, store: str, labels: Iterable[str]) -> set[str]:
    """The slugs --allow names; a label the store does not hold is refused
    (a typo would otherwise share nothing, silently), with a did-you-mean."""
    from ..support.slugs import slugify

    labels = list(labels)
    if not labels:
        return set()
    known = {m.slug: m.label for m in ctx.db().list([store], archived=None)}
    found = set()
    for label in labels:
        if not label.strip():
            raise InvalidInput("--allow needs a label")
        slug = slugify(label)
        if slug not in known:
            from ..support.suggest import close, did_you_mean

            near = close(label, known.values())
            raise NotFound(f"--allow: no memory labelled {label!r} in {store}{did_you_mean(near)}; nothing was"
                           " synced", label=label, store=store, suggestions=near)
        found.add(slug)
    return found


def merge_round(step: Round, dry_run: bool) -> str | None:
    """Read both sides, merge them, and (unless `dry_run`) commit the merged
    tree and write what came in; returns the commit to push."""
    from .applying import apply, commit
    from .reading import hold_purged, local_state, purged_keys, read_fields, read_side

    git, conn, store = step.git, step.db.conn, step.repo.store
    state = table.state(conn, store)
    last_tip = state.get("base") if git.has(state.get("base")) else None
    remote_tip = step.remote_tip if git.has(step.remote_tip) else None
    if remote_tip and git.kind(remote_tip) != "commit":
        remote_tip = None
    base_tip = git.merge_base(last_tip, remote_tip)
    snap_remote = git.snapshot(remote_tip)
    git.check_format(snap_remote)
    remote_purged = purged_keys(git, snap_remote, None)
    step.purged = remote_purged | purged_keys(git, Snapshot.empty(), state.get("purged"))
    last = read_side(step, git.snapshot(last_tip), trusted=True)
    base = last if base_tip == last_tip else read_side(step, git.snapshot(base_tip), trusted=True)
    remote = read_side(step, snap_remote, trusted=False)
    node = table.node_id(conn, random.getrandbits(40).to_bytes(5, "big").hex()) if not dry_run else "dry"
    git.anonymous = f"thatch-{node}"
    clock = hlc.Clock(node, hlc.parse(state.get("hlc")), hlc.millis_of(step.ctx.now()))
    rows, excluded, local = local_state(step, store, last, remote, clock)
    plan = merge.merge(local, base, remote, rows, excluded, clock)
    if step.purged:
        hold_purged(step, plan.tree)
    outcome = step.outcome
    for kind, count in plan.pulled().items():  # a round after a lost lease adds to the earlier rounds'
        outcome.pulled[kind] += count
    outcome.conflicts += [c.to_json() for c in plan.conflicts]
    outcome.held += [{"slug": s, "label": _label(rows, s), "reason": "private or branch-scoped here;"
                      " the remote's change was not taken", "rules": []} for s in plan.held]
    for slug, record in plan.tree.items():
        before = snap_remote.memories.get(slug)
        step.pushed["deleted" if record.deleted else "updated" if before else "created"] += 1
    outcome.pushed = dict(step.pushed)
    if dry_run:
        return None
    read_fields(step, [record for record, _ in plan.apply], snap_remote)
    teach = step.purged - remote_purged  # purges the remote lost (an old clone's push) or never had
    new_tip = commit(step, snap_remote, plan, remote_tip, teach) if plan.tree or teach else remote_tip
    apply(step, plan, new_tip, clock)
    return new_tip


def _label(rows: dict[str, tuple[Any, ...]], slug: str) -> str:
    from ..memory.records import SYNCED_FIELDS

    row = rows.get(slug)
    return str(row[SYNCED_FIELDS.index("label")]) if row else slug
