"""Moving or archiving every memory of one branch: after a merge, a rename,
or when a branch is abandoned."""

from __future__ import annotations

from dataclasses import dataclass

from ..memory.records import Memory
from ..storage import maintenance
from ..support import validate
from ..support.errors import InvalidInput, NotFound
from .context import Context
from .scope import target


@dataclass
class BranchChange:
    store: str
    branch: str
    to: str | None  # rescope target (None = unscoped); unused by archive
    memories: list[Memory]
    branches_left: list[str]  # branches that still have memories in the store

    def to_json(self, **which: str | None) -> dict:
        return {"store": self.store, **which, "changed": len(self.memories),
                "memories": [m.brief() for m in self.memories], "branches_left": self.branches_left}


def rescope(ctx: Context, old: str, new: str | None, *, store: str | None = None) -> BranchChange:
    """Move every memory (live and archived) scoped to branch `old` to branch
    `new`, or to unscoped when `new` is None. Slugs are keyed by store, not
    branch, so nothing collides; updated_at is left alone (the content did
    not change)."""
    old = validate.branch(old, "--from")
    if new is not None:
        new = validate.branch(new, "--to")
        if new == old:
            raise InvalidInput("--from and --to name the same branch")
    name = target(ctx, store)
    db = ctx.db()
    moved = maintenance.move_branch(db, name, old, new)
    if not moved:
        raise nothing_scoped(name, old, "memories", "moved", db.branches([name]))
    return BranchChange(name, old, new, moved, db.branches([name]))


def archive(ctx: Context, branch: str, *, store: str | None = None) -> BranchChange:
    """Archive every live memory scoped to `branch`: kept as record, left
    out of recall and hygiene."""
    branch = validate.branch(branch)
    name = target(ctx, store)
    db = ctx.db()
    changed = maintenance.archive_branch(db, name, branch)
    if not changed:
        live = sorted({m.branch for m in db.list([name], archived=False) if m.branch})
        raise nothing_scoped(name, branch, "live memories", "archived", live)
    return BranchChange(name, branch, None, changed, db.branches([name]))


def nothing_scoped(store: str, branch: str, what: str, done: str, left: list[str]) -> NotFound:
    """A branch with nothing to act on is a mistake worth saying (a typo, a
    branch already handled): exit 3, naming the branches that have `what` (`left`)."""
    listed = f" (branches with {what}: {', '.join(left)})" if left else ""
    return NotFound(f"no {what} scoped to branch {branch} in {store}; nothing {done}{listed}",
                    store=store, branch=branch, branches_left=left)
