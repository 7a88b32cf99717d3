"""`thatch rescope | archive`: move or archive a branch's memories after a
merge, a rename or an abandoned branch (ops/branches.py)."""

from __future__ import annotations

from typing import Annotated, Optional

from ..context import Context
from ..errors import InvalidInput
from .declare import Json, Option, Store, command
from .output import Output
from .render import plural


@command("rescope")
def rescope(
    ctx: Context, out: Output, *,
    from_branch: Annotated[str, Option("--from", metavar="BRANCH", show_default=False,
                                       help="Branch whose memories move (live and archived).")],
    to_branch: Annotated[Optional[str], Option("--to", metavar="BRANCH", help="Branch to scope them to instead.")] = None,
    unscoped: Annotated[bool, Option("--unscoped", help="Make them project-wide (e.g. after a merge).")] = False,
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Move the memories of one branch to another branch, or to the whole project (--unscoped)."""
    from ..ops.branches import rescope as move

    if (to_branch is None) == (not unscoped):
        raise InvalidInput("give exactly one of --to BRANCH or --unscoped")
    change = move(ctx, from_branch, None if unscoped else to_branch, store=store)
    if out.json_mode:
        out.json(change.to_json(**{"from": change.branch, "to": change.to}))
        return
    if not change.memories:
        out.line(f"No memories scoped to branch {change.branch} in {change.store}; nothing moved.")
        _branches_hint(out, change)
        return
    where = f"branch {change.to}" if change.to is not None else "unscoped (project-wide)"
    out.line(f"Moved {_count(change)} in {change.store} from branch {change.branch} to {where}:")
    _listed(out, change)


@command("archive")
def archive(
    ctx: Context, out: Output, *,
    branch: Annotated[str, Option("--branch", "-b", metavar="BRANCH", show_default=False,
                                  help="Branch whose live memories are archived.")],
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Archive every live memory of a branch: kept as record, left out of recall and hygiene."""
    from ..ops.branches import archive as stow

    change = stow(ctx, branch, store=store)
    if out.json_mode:
        out.json(change.to_json(branch=change.branch))
        return
    if not change.memories:
        out.line(f"No live memories scoped to branch {change.branch} in {change.store}; nothing archived.")
        _branches_hint(out, change)
        return
    out.line(f"Archived {_count(change)} of branch {change.branch} in {change.store}:")
    _listed(out, change)


def _count(change) -> str:
    return plural(len(change.memories), "memory", "memories")


def _listed(out: Output, change) -> None:
    for m in change.memories:
        out.line(f"  {m.label}" + (" (archived)" if m.archived else ""))


def _branches_hint(out: Output, change) -> None:
    if change.branches_left:
        out.notice(f"branches with memories in {change.store}: {', '.join(change.branches_left)}")
