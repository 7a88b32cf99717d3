"""Moving or archiving every memory of one branch: after a merge, a rename,
or when a branch is abandoned."""

from __future__ import annotations

from dataclasses import dataclass

from .. import validate
from ..context import Context
from ..errors import InvalidInput
from ..records import Memory
from ..storage import maintenance
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
    return BranchChange(name, old, new, moved, db.branches([name]))


def archive(ctx: Context, branch: str, *, store: str | None = None) -> BranchChange:
    """Archive every live memory scoped to `branch`: kept as record, left
    out of recall and hygiene."""
    branch = validate.branch(branch)
    name = target(ctx, store)
    db = ctx.db()
    changed = maintenance.archive_branch(db, name, branch)
    return BranchChange(name, branch, None, changed, db.branches([name]))
