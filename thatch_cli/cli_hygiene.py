"""Commands of the hygiene area, registered on the app defined in cli.py:
hygiene, duplicates, rescope, archive, and the `dedup` and `completion` groups.
Bodies live in hygiene_commands.py."""

from __future__ import annotations

from typing import Optional

import typer

from . import hygiene_commands as impls
from .cli import JsonOpt, StoreOpt, app, command, one_of
from .completion_install import SHELLS
from .lifecycle import DEFAULT_PAIR_LIMIT, DEFAULT_STALE_DAYS, DUPLICATE_THRESHOLD, MAX_PAIR_LIMIT, VERDICTS


@command(impls.hygiene)
def hygiene(
    store: Optional[str] = StoreOpt,
    stale_days: int = typer.Option(DEFAULT_STALE_DAYS, "--stale-days", metavar="DAYS",
                                   help="Call a memory stale after this many days without update or recall."),
    as_json: bool = JsonOpt,
) -> None:
    """Report near-duplicates, stale memories and memories of deleted branches (never deletes).

    Exits 0 when the store is clean and 5 when something needs attention."""


@command(impls.duplicates)
def duplicates(
    store: Optional[str] = StoreOpt,
    threshold: float = typer.Option(DUPLICATE_THRESHOLD, "--threshold", "-t", metavar="COSINE",
                                    help="Report pairs with at least this cosine (above 0, at most 1)."),
    limit: int = typer.Option(DEFAULT_PAIR_LIMIT, "--limit", "-n", metavar="N",
                              help=f"Report the best N pairs (1-{MAX_PAIR_LIMIT}); counts still cover every pair."),
    as_json: bool = JsonOpt,
) -> None:
    """List clusters of near-duplicate memories in a store (never deletes; exits 0).

    Compares the stored vectors of live memories pairwise, without loading
    the model, and only vectors of the configured model (THATCH_MODEL);
    memories with another model's vector or none are counted, not compared.
    Pairs with a dedup verdict are left out. A cluster is a connected group:
    A~B and B~C put A, B and C in one cluster even when A and C are not
    similar. Only the best --limit pairs are listed, with the clusters that
    hold them; every listed cluster names all its members and counts all
    its pairs, and the totals count every pair and cluster, so memory stays
    bounded even when every memory matches every other."""


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


LabelA = typer.Argument(..., metavar="LABEL_A", help="One memory of the pair (label or slug).")
LabelB = typer.Argument(..., metavar="LABEL_B", help="The other memory of the pair.")

dedup_app = typer.Typer(
    help="Verdicts on near-duplicate pairs, so duplicates and hygiene stop reporting them.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(dedup_app, name="dedup")


@command(impls.dedup_keep, "keep", group=dedup_app)
def dedup_keep(
    label_a: str = LabelA,
    label_b: str = LabelB,
    store: Optional[str] = StoreOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Record that two similar memories are distinct and both worth keeping.

    Records the status "distinct": both are worth keeping, without saying
    how they relate (`dedup mark` says that: supplement, unrelated, ...).
    The verdict lasts until either memory is overwritten or forgotten."""


@command(impls.dedup_mark, "mark", group=dedup_app)
def dedup_mark(
    label_a: str = LabelA,
    label_b: str = LabelB,
    status: str = one_of(VERDICTS, typer.Option(
        ..., "--status", metavar="STATUS", show_default=False,
        help="How the two memories relate: duplicate, supplement, contradiction or unrelated.")),
    store: Optional[str] = StoreOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Record a verdict on a similar pair: duplicate, supplement, contradiction or unrelated.

    The pair is no longer reported by duplicates or hygiene until either
    memory is overwritten or forgotten."""


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
    shell: Optional[str] = one_of(SHELLS, typer.Argument(
        None, metavar="[SHELL]", show_default=False, help="bash, zsh or fish (default: the shell you are running).")),
    as_json: bool = JsonOpt,
) -> None:
    """Install the completion script where your shell looks for it (safe to re-run)."""


@command(impls.completion_show, "show", group=completion_app)
def completion_show(
    shell: str = one_of(SHELLS, typer.Argument(..., metavar="SHELL", help="bash, zsh or fish.")),
    as_json: bool = JsonOpt,
) -> None:
    """Print the completion script for a shell."""
