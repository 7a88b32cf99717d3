"""`thatch hooks install | uninstall | status`: thatch's git hooks
(integrations/githooks.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Optional

from ..ops.context import Context
from .declare import Json, Option, command, group
from .output import Output

HOOKS = group("hooks", "Git hooks: memories of the branch you switch to, notice of deleted branches.")

HOOKS_KEYS = ("common_dir, hooks_dir, core_hooks_path, active, hooks (name, path, state: installed, chained, foreign"
              " or missing; legacy, current, action)")

Repo = Annotated[Optional[str], Option("--repo", metavar="PATH",
                                       help="Repository (any directory or linked worktree in it); default: the current one.")]

_DESCRIBE = {
    "installed": "installed",
    "chained": "installed, runs your previous hook first",
    "foreign": "not installed: another hook is present",
    "missing": "missing",
}

_ACTIONS = {
    "installed": "installed",
    "chained": "installed; your previous hook was kept and still runs first",
    "updated": "updated",
    "unchanged": "already installed",
    "restored": "removed; your previous hook is back",
    "removed": "removed",
    "left alone": "not thatch's, left alone",
    "nothing to do": "not installed",
}


@command("install", group=HOOKS, examples=["thatch hooks install", "thatch hooks install --repo ~/src/widget"],
         json=HOOKS_KEYS)
def hooks_install(ctx: Context, out: Output, *, repo: Repo = None, as_json: Json = False) -> None:
    """Install the post-checkout and reference-transaction hooks (again: no change).

    They go into the hooks directory of the repository's common git dir, so every linked worktree gets them. A hook already there is kept as <name>.thatch-legacy and still runs first, with the same arguments and input; its exit status becomes the hook's.

    If core.hooksPath is set, thatch refuses to install: git then runs hooks only from that directory, which another tool or a team usually manages.

    THATCH_HOOKS=0 in the environment makes installed hooks skip thatch's part.
    """
    from ..integrations import githooks
    from ..integrations.shell import resolve_executable

    executable = resolve_executable(sys.argv[0] if sys.argv else "", ctx.env)
    _print(out, githooks.install(_start(ctx, repo), executable), actions=True)


@command("uninstall", group=HOOKS, examples=["thatch hooks uninstall"], json=HOOKS_KEYS)
def hooks_uninstall(ctx: Context, out: Output, *, repo: Repo = None, as_json: Json = False) -> None:
    """Remove thatch's hooks, putting back byte for byte any hook they replaced."""
    from ..integrations import githooks

    _print(out, githooks.uninstall(_start(ctx, repo)), actions=True)


@command("status", group=HOOKS, examples=["thatch hooks status"], json=HOOKS_KEYS)
def hooks_status(ctx: Context, out: Output, *, repo: Repo = None, as_json: Json = False) -> None:
    """Show each hook's state: installed, chained (runs your previous hook too), foreign, or missing."""
    from ..integrations import githooks
    from ..integrations.shell import resolve_executable

    try:
        executable: str | None = resolve_executable(sys.argv[0] if sys.argv else "", ctx.env)
    except Exception:
        executable = None
    _print(out, githooks.status(_start(ctx, repo), executable), actions=False)


def _start(ctx: Context, repo: str | None) -> Path:
    return ctx.cwd / os.path.expanduser(repo) if repo else ctx.cwd


def _print(out: Output, result, *, actions: bool) -> None:
    from ..integrations.githooks import CHAINED, HOOK_NAMES, INSTALLED

    if out.json_mode:
        out.json(result.public())
        return
    width = max(len(n) for n in HOOK_NAMES)
    for hook in result.hooks:
        text = _ACTIONS[hook.action] if actions and hook.action else _DESCRIBE[hook.state]
        if not actions and hook.state in (INSTALLED, CHAINED) and hook.current is False:
            text += " (outdated: `thatch hooks install` rewrites it)"
        if hook.legacy is not None:
            chained = hook.state == CHAINED
            text += f" ({'kept as' if chained else 'also present:'} {hook.legacy.name})"
        out.line(f"{hook.name:<{width}}  {text}")
    out.line(f"hooks directory: {result.location.hooks_dir}")
    if result.location.hooks_path is not None:
        out.line(f"note: core.hooksPath is {result.location.hooks_path}; git does not run hooks from the directory above")
