"""Everything about `thatch sync` except the sync itself: opting a
repository in and out, its status, purging a memory from the remote,
reviewing what teammates shared, and marking memories private."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..memory.records import Memory
from ..ops.context import Context
from ..ops.scope import lookup
from ..storage import sync as table
from ..support import secrets, validate
from ..support.errors import InvalidInput
from . import gitconfig
from .repo import repository

# What `thatch sync ACTION` does besides syncing.
ACTIONS = ("init", "status", "off", "purge")


def audience(remote: str, url: str | None, store: str) -> str:
    """Who can read what sync shares, in one sentence (init says it before asking)."""
    from ..support.textsafe import one_line

    return (f"Memories of {one_line(store)} will be shared through the git remote {one_line(remote)}"
            f" ({one_line(url or '')}): anyone who can fetch from it can read them (for a public repository, everyone)."
            " Private memories, branch-scoped ones and the global store stay on this machine.")


class Setup:
    def __init__(self, store: str, remote: str | None, url: str | None, status: str, changes: list[str],
                 notices: list[str]) -> None:
        self.store, self.remote, self.url, self.status = store, remote, url, status
        self.changes, self.notices = changes, notices

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "remote": self.remote, "url": self.url, "status": self.status,
                "changes": self.changes, "notices": self.notices}


def init(ctx: Context, remote: str | None, *, yes: bool, ask: Callable[[str], bool] | None) -> Setup:
    """Opt this repository in: say who will be able to read its memories,
    ask (or take --yes), then add the fetch refspec and the git hooks.
    Running it again changes nothing."""
    repo = repository(ctx)
    name = validate.branch(remote, "--remote") if remote else repo.remote or gitconfig.default_remote(repo.top, ctx.env)
    url = secrets.redact_url(gitconfig.remote_url(repo.top, ctx.env, name))  # never shown with its token
    who = audience(name, url, repo.store)
    asked = False
    if repo.remote == name or yes:
        confirmed = True
    elif ask is not None:
        confirmed, asked = ask(who), True
    else:
        raise InvalidInput(f"{who} Pass --yes to share them (nothing was changed).", remote=name, url=url)
    if not confirmed:
        return Setup(repo.store, name, url, "declined", [], ["nothing was changed"])
    changes = gitconfig.enable(repo.top, ctx.env, name)
    notices = [] if asked else [who]  # the question already said it
    notices += _hooks(ctx, repo.top)
    return Setup(repo.store, name, url, "enabled" if changes else "unchanged", changes, notices)


def _hooks(ctx: Context, top: Path) -> list[str]:
    """Install thatch's git hooks (idempotent), so `git fetch` imports what it brings."""
    import sys

    from ..integrations import githooks
    from ..integrations.shell import resolve_executable
    from ..support.errors import ThatchError

    try:
        result = githooks.install(top, resolve_executable(sys.argv[0] if sys.argv else "", ctx.env))
    except ThatchError as exc:
        return [f"git hooks not installed ({exc.message}): run 'thatch sync' after git fetch to import"]
    done = [h.name for h in result.hooks if h.action in ("installed", "chained", "updated")]
    return [(f"installed thatch's git hooks ({', '.join(done)}): git fetch and git pull now bring teammates'"
             " memories in")] if done else []


def off(ctx: Context) -> Setup:
    """Opt out: remove the refspec and the setting init added. What was
    shared stays on the remote, and the local ref stays (both said)."""
    repo = repository(ctx)
    changes = gitconfig.disable(repo.top, ctx.env)
    notices = [] if not changes else [
        (f"memories already pushed stay on {repo.remote} (thatch sync purge LABEL removes one; 'git push"
         f" {repo.remote} :refs/thatch/memories' removes them all); this machine keeps every memory")]
    return Setup(repo.store, repo.remote, None, "disabled" if changes else "unchanged", changes, notices)


class Status:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def to_json(self) -> dict[str, Any]:
        return self.data


def status(ctx: Context) -> Status:
    """Where sync stands, without the network: set up or not, what a sync
    would push and take from what git last fetched, what awaits review."""
    from .run import sync

    repo = repository(ctx)
    db = ctx.db()
    state = table.state(db.conn, repo.store)
    marked = table.has_marks(db.conn)
    data: dict[str, Any] = {
        "store": repo.store, "enabled": repo.remote is not None, "remote": repo.remote, "url": None,
        "base": state.get("base"), "last_sync": json.loads(state["last"]) if "last" in state else None,
        "to_push": None, "to_pull": None, "held": [],
        "unreviewed": len(table.unreviewed(db.conn, repo.store)) if marked else 0,
        "private": len(table.private_slugs(db.conn, repo.store)) if marked else 0}
    if repo.remote is not None:
        data["url"] = secrets.redact_url(gitconfig.get(repo.top, ctx.env, f"remote.{repo.remote}.url"))
        preview = sync(ctx, dry_run=True, fetch=False)
        data["to_push"], data["to_pull"], data["held"] = preview.pushed, preview.pulled, preview.held
    return Status(data)


class Review:
    def __init__(self, store: str, incoming: list[Memory], accepted: int) -> None:
        self.store, self.incoming, self.accepted = store, incoming, accepted

    def to_json(self) -> dict[str, Any]:
        from ..ops.recall import snippet

        return {"store": self.store, "accepted": self.accepted,
                "incoming": [{**m.brief(), "snippet": snippet(m)} for m in self.incoming]}


def review(ctx: Context, accept: list[str], accept_all: bool) -> Review:
    """Teammates' memories not reviewed yet; `accept` (labels) or
    `accept_all` marks them reviewed, so agents see them in full."""
    repo = repository(ctx)
    db = ctx.db()
    pending = dict(table.unreviewed(db.conn, repo.store)) if table.has_marks(db.conn) else {}
    chosen: list[str] = list(pending) if accept_all else []
    for label in accept:
        memory = lookup(ctx, label, repo.store, fallback=False)
        if memory.slug not in pending:
            raise InvalidInput(f"{memory.label!r} is not awaiting review")
        chosen.append(memory.slug)
    accepted = 0
    if chosen:
        with db.transaction() as conn:
            accepted = table.accept(conn, repo.store, chosen)
    left = [m for m in (db.get(repo.store, slug) for slug in pending if slug not in chosen) if m is not None]
    return Review(repo.store, left, accepted)


class Privacy:
    def __init__(self, memory: Memory, changed: bool, notice: str | None) -> None:
        self.memory, self.changed, self.notice = memory, changed, notice

    def to_json(self) -> dict[str, Any]:
        return {"memory": self.memory.brief(), "changed": self.changed,
                "notices": [self.notice] if self.notice else []}


def set_private(ctx: Context, label: str, private: bool, store: str | None = None) -> Privacy:
    """Keep a memory off the remote (`thatch private`) or let sync share it
    again (`thatch share`). Doing it twice changes nothing."""
    memory = lookup(ctx, label, store, fallback=False)
    db = ctx.db()
    with db.transaction() as conn:
        changed = table.set_private(conn, memory.store, memory.slug, private)
    memory.private = private
    notice = None
    if private and changed and table.state(db.conn, memory.store).get("base"):
        notice = ("if it was shared before, teammates keep that copy and the remote still holds it:"
                  f" 'thatch sync purge {memory.label}' removes it from the remote")
    return Privacy(memory, changed, notice)

