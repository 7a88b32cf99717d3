"""Commands of the git area, registered on the app defined in cli.py: the
shell hook (`init`) and the `hooks` group. Bodies live in shellinit.py and
githooks.py."""

from __future__ import annotations

from typing import Optional

import typer

from . import githooks, shellinit
from .cli import JsonOpt, app, command, one_of


@command(shellinit.init, name="init")
def init(
    shell: Optional[str] = one_of(shellinit.SHELLS, typer.Argument(
        None, show_default=False, help="Shell to print the hook for (default: the one running thatch).")),
    deactivate: bool = typer.Option(False, "--deactivate",
                                    help="Print what removes the hook from the running shell instead."),
    as_json: bool = JsonOpt,
) -> None:
    """Print the shell hook: a one-line memory summary when you enter a repository or switch branch.

    Add one line to your shell's startup file:

      bash  (~/.bashrc)                   eval "$(thatch init bash)"
      zsh   (~/.zshrc)                    eval "$(thatch init zsh)"
      fish  (~/.config/fish/config.fish)  thatch init fish | source

    When neither the repository around the current directory nor its HEAD changed since the last prompt, the hook starts no process. THATCH_QUIET=1 silences it.

    To remove it from a running shell: eval "$(thatch init --deactivate bash)" (zsh likewise); fish: thatch init --deactivate fish | source
    """


hooks_app = typer.Typer(
    help="Git hooks: memories of the branch you switch to, notice of deleted branches.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(hooks_app, name="hooks")

RepoOpt = typer.Option(None, "--repo", metavar="PATH",
                       help="Repository (any directory or linked worktree in it); default: the current one.")


@command(githooks.hooks_install, "install", group=hooks_app)
def hooks_install(repo: Optional[str] = RepoOpt, as_json: bool = JsonOpt) -> None:
    """Install the post-checkout and reference-transaction hooks (again: no change).

    They go into the hooks directory of the repository's common git dir, so every linked worktree gets them. A hook already there is kept as <name>.thatch-legacy and still runs first, with the same arguments and input; its exit status becomes the hook's.

    If core.hooksPath is set, thatch refuses to install: git then runs hooks only from that directory, which another tool or a team usually manages.

    THATCH_HOOKS=0 in the environment makes installed hooks skip thatch's part.
    """


@command(githooks.hooks_uninstall, "uninstall", group=hooks_app)
def hooks_uninstall(repo: Optional[str] = RepoOpt, as_json: bool = JsonOpt) -> None:
    """Remove thatch's hooks, putting back byte for byte any hook they replaced."""


@command(githooks.hooks_status, "status", group=hooks_app)
def hooks_status(repo: Optional[str] = RepoOpt, as_json: bool = JsonOpt) -> None:
    """Show each hook's state: installed, chained (runs your previous hook too), foreign, or missing."""
