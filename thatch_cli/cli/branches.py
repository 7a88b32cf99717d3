"""`thatch rescope | archive | unarchive`: move or archive a branch's
memories after a merge, a rename or an abandoned branch (ops/branches.py),
or archive and restore one memory (ops/memories.py)."""

from __future__ import annotations

from typing import Annotated, Optional

from ..ops.context import Context
from ..support.errors import InvalidInput
from .declare import BRIEF, Argument, Json, Option, Store, command
from .output import Output
from .render import plural


@command("rescope", examples=[
    "thatch rescope --from feat/login --unscoped     # after merging feat/login",
    "thatch rescope --from feat/login --to feat/auth  # after a branch rename",
], json=f"store, from, to, changed (a count), memories ({BRIEF}), branches_left")
def rescope(
    ctx: Context, out: Output, *,
    from_branch: Annotated[str, Option("--from", metavar="BRANCH", show_default=False,
                                       help="Branch whose memories move (live and archived).")],
    to_branch: Annotated[Optional[str], Option("--to", metavar="BRANCH", help="Branch to scope them to instead.")] = None,
    unscoped: Annotated[bool, Option("--unscoped", help="Make them project-wide (e.g. after a merge).")] = False,
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Move the memories of one branch to another branch, or to the whole project (--unscoped).

    A branch with no memories is an error (exit 3) naming the branches that have some."""
    from ..ops.branches import rescope as move

    if (to_branch is None) == (not unscoped):
        raise InvalidInput("give exactly one of --to BRANCH or --unscoped")
    change = move(ctx, from_branch, None if unscoped else to_branch, store=store)
    if out.json_mode:
        out.json(change.to_json(**{"from": change.branch, "to": change.to}))
        return
    where = f"branch {change.to}" if change.to is not None else "unscoped (project-wide)"
    out.line(f"Moved {_count(change)} in {change.store} from branch {change.branch} to {where}:")
    _listed(out, change)


@command("archive", examples=[
    'thatch archive "Old deploy steps"',
    "thatch archive --branch feat/login     # every live memory of a branch",
    "thatch archive --this-branch",
], json=f"one memory: memory ({BRIEF}), changed, notices; a branch: store, branch, changed (a count), memories, branches_left")
def archive(
    ctx: Context, out: Output, *,
    label: Annotated[Optional[str], Argument(metavar="LABEL", show_default=False,
                                             help="Label (or slug) of the one memory to archive.")] = None,
    branch: Annotated[Optional[str], Option("--branch", "-b", metavar="BRANCH", show_default=False,
                                            help="Archive every live memory of this branch instead.")] = None,
    this_branch: Annotated[bool, Option("--this-branch", help="Archive every live memory of the current branch.")] = False,
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Archive one memory, or every live memory of a branch: kept as record, left out of recall and hygiene.

    Archiving what is already archived changes nothing. A branch with no live memories is an error (exit 3), so a mistyped name never passes silently. `thatch unarchive LABEL` brings a memory back."""
    if label is not None:
        if branch is not None or this_branch:
            raise InvalidInput("give a LABEL or --branch/--this-branch, not both")
        _one(ctx, out, label, True, store)
        return
    from ..ops.branches import archive as stow
    from ..ops.scope import branch_choice

    chosen = branch_choice(ctx, branch, this_branch)
    if chosen is None:
        raise InvalidInput("give a LABEL, or --branch BRANCH / --this-branch for a whole branch")
    change = stow(ctx, chosen, store=store)
    if out.json_mode:
        out.json(change.to_json(branch=change.branch))
        return
    out.line(f"Archived {_count(change)} of branch {change.branch} in {change.store}:")
    _listed(out, change)


@command("unarchive", examples=['thatch unarchive "Old deploy steps"'], json=f"memory ({BRIEF}), changed, notices")
def unarchive(
    ctx: Context, out: Output, *,
    label: Annotated[str, Argument(metavar="LABEL", help="Label (or slug) of the archived memory.")],
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Bring an archived memory back into recall (restoring a live one changes nothing)."""
    _one(ctx, out, label, False, store)


def _one(ctx: Context, out: Output, label: str, archived: bool, store: str | None) -> None:
    from .memories import set_flag_and_say

    set_flag_and_say(ctx, out, label, "archived", archived, store, done="Archived" if archived else "Restored",
                     state="archived" if archived else "live")


def _count(change) -> str:
    return plural(len(change.memories), "memory", "memories")


def _listed(out: Output, change) -> None:
    for m in change.memories:
        out.line(f"  {m.label}" + (" (archived)" if m.archived else ""))
