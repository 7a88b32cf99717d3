"""Commands of the hygiene area, registered on the app defined in cli.py:
hygiene, rescope, archive, and the `dedup` and `completion` groups.
Bodies live in hygiene_commands.py."""

from __future__ import annotations

from typing import Optional

import typer

from . import hygiene_commands as impls
from .cli import JsonOpt, StoreOpt, app, command
from .lifecycle import DEFAULT_STALE_DAYS


@command(impls.hygiene)
def hygiene(
    store: Optional[str] = StoreOpt,
    stale_days: int = typer.Option(DEFAULT_STALE_DAYS, "--stale-days", metavar="DAYS",
                                   help="Call a memory stale after this many days without update or recall."),
    as_json: bool = JsonOpt,
) -> None:
    """Report near-duplicates, stale memories and memories of deleted branches (never deletes).

    Exits 0 when the store is clean and 5 when something needs attention."""


@command(impls.rescope)
def rescope(
    from_branch: str = typer.Option(..., "--from", metavar="BRANCH", show_default=False,
                                    help="Branch whose memories move (live and archived)."),
    to_branch: Optional[str] = typer.Option(None, "--to", metavar="BRANCH",
                                            help="Branch to scope them to instead."),
    unscoped: bool = typer.Option(False, "--unscoped", help="Make them project-wide (e.g. after a merge)."),
    store: Optional[str] = StoreOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Move the memories of one branch to another branch, or to the whole project (--unscoped)."""


@command(impls.archive)
def archive(
    branch: str = typer.Option(..., "--branch", "-b", metavar="BRANCH", show_default=False,
                               help="Branch whose live memories are archived."),
    store: Optional[str] = StoreOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Archive every live memory of a branch: kept as record, left out of recall and hygiene."""


dedup_app = typer.Typer(
    help="Verdicts on near-duplicate pairs, so hygiene stops reporting them.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(dedup_app, name="dedup")


@command(impls.dedup_keep, "keep", group=dedup_app)
def dedup_keep(
    label_a: str = typer.Argument(..., metavar="LABEL_A", help="One memory of the pair (label or slug)."),
    label_b: str = typer.Argument(..., metavar="LABEL_B", help="The other memory of the pair."),
    store: Optional[str] = StoreOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Record that two similar memories are distinct and both worth keeping.

    The verdict lasts until either memory is overwritten or forgotten."""


@command(impls.dedup_list, "list", group=dedup_app)
def dedup_list(store: Optional[str] = StoreOpt, as_json: bool = JsonOpt) -> None:
    """List the recorded dedup verdicts of a store."""


completion_app = typer.Typer(
    help="Shell completion for bash, zsh and fish.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(completion_app, name="completion")


@command(impls.completion_install, "install", group=completion_app)
def completion_install(
    shell: Optional[str] = typer.Argument(None, metavar="[SHELL]", show_default=False,
                                          help="bash, zsh or fish (default: the shell you are running)."),
    as_json: bool = JsonOpt,
) -> None:
    """Install the completion script where your shell looks for it (safe to re-run)."""


@command(impls.completion_show, "show", group=completion_app)
def completion_show(
    shell: str = typer.Argument(..., metavar="SHELL", help="bash, zsh or fish."),
    as_json: bool = JsonOpt,
) -> None:
    """Print the completion script for a shell."""
