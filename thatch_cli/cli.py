"""The Typer command line: the single definition of every command's
arguments, options and help. Bodies live in typer-free modules (commands.py
and friends) so the fast dispatcher can run them without importing Typer;
`python -m thatch_cli.gen spec` exports these definitions for it."""

from __future__ import annotations

import functools
import inspect
from typing import Callable, Optional, Sequence, TypeVar

import typer

from . import __version__, commands
from .context import Context
from .recall import MODES
from .runner import run

app = typer.Typer(
    name="thatch",
    help="A local, git-aware memory store for coding agents and the people who work beside them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

JsonOpt = typer.Option(False, "--json", help="Print machine-readable JSON (stable keys; see README).")
StoreOpt = typer.Option(None, "--store", "-s", help="Store to use instead of the detected one (also THATCH_STORE).")


def command(impl: Callable, name: str | None = None, *, group: typer.Typer | None = None, **settings) -> Callable:
    """Register the decorated declaration (its signature and docstring) as a
    command of `group` (default: the top level) whose body is
    `impl(ctx, out, **options)`; `thatch_impl` lets the fast dispatcher find it."""

    def decorate(declaration: Callable) -> Callable:
        @functools.wraps(declaration)
        def invoke(*, _typer_ctx: typer.Context, **options) -> None:
            root = _typer_ctx.find_root()
            # Tests pass a ready Context as `obj`; a real run builds one.
            ctx = root.obj if isinstance(root.obj, Context) else Context.from_process()
            code = run(impl, ctx, options)
            if code:
                raise typer.Exit(code)

        params = list(inspect.signature(declaration).parameters.values())
        injected = inspect.Parameter("_typer_ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
        invoke.__signature__ = inspect.Signature([*params, injected])
        invoke.thatch_impl = f"{impl.__module__}:{impl.__qualname__}"
        cmd_name = name or impl.__name__.rstrip("_").replace("_", "-")
        return (group or app).command(cmd_name, **settings)(invoke)

    return decorate


Info = TypeVar("Info")


def one_of(values: Sequence[str], info: Info) -> Info:
    """Declare that the option or argument `info` (a typer.Option or
    typer.Argument) takes one of `values`. Help shows them as its metavar
    ([a|b|c]) unless it names one, and cli_model exports them as `choices`
    (cli_spec.json, the completion scripts, the man page).

    Typer does not check the value and the implementation still receives a
    plain str: the library rejects anything else with its one-line error
    (exit 2), identically on the Typer path and the fast dispatcher. (A
    Literal annotation would make Typer reject a typo first, with a boxed
    usage error the fast path does not produce.)"""
    info.thatch_choices = tuple(values)  # type: ignore[attr-defined]
    if info.metavar is None:  # type: ignore[attr-defined]
        info.metavar = "[" + "|".join(values) + "]"  # type: ignore[attr-defined]
    return info


def _version(value: bool) -> None:
    if value:
        typer.echo(f"thatch {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    """Save labelled notes for later (remember) and find them by meaning (recall)."""


@command(commands.remember)
def remember(
    first: str = typer.Argument(..., metavar="[LABEL] CONTENT", show_default=False,
                                help="Optional label, then the content ('-' reads stdin)."),
    second: Optional[str] = typer.Argument(None, hidden=True),
    store: Optional[str] = StoreOpt,
    branch: Optional[str] = typer.Option(None, "--branch", "-b", help="Scope the memory to this branch."),
    this_branch: bool = typer.Option(False, "--this-branch", help="Scope the memory to the current branch."),
    confidence: Optional[int] = typer.Option(None, "--confidence", "-c", help="How sure you are, 1-10."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing memory with this label."),
    archived: Optional[bool] = typer.Option(None, "--archived/--no-archived", show_default=False,
                                            help="Archive (or restore) it; required when updating an archived memory."),
    as_json: bool = JsonOpt,
) -> None:
    """Save a memory. Without a label, the content's first heading or line becomes the label."""


@command(commands.recall)
def recall(
    query: str = typer.Argument(..., help="What you are looking for, in your own words."),
    store: Optional[str] = typer.Option(None, "--store", "-s", help="Search only this store."),
    all_stores: bool = typer.Option(False, "--all-stores", "-a", help="Search every store."),
    branch: Optional[str] = typer.Option(None, "--branch", "-b",
                                         help="Include this branch's memories instead of the current branch's."),
    limit: int = typer.Option(10, "--limit", "-n", help="Most results to show."),
    include_archived: bool = typer.Option(False, "--include-archived", help="Search archived memories too."),
    mode: str = one_of(MODES, typer.Option("hybrid", "--mode", "-m", metavar="MODE",
                                           help="Ranking: hybrid (meaning and exact words), semantic or lexical.")),
    budget: Optional[int] = typer.Option(None, "--budget", metavar="CHARS",
                                         help="Cap the output at CHARS characters, dropping whole results."),
    as_json: bool = JsonOpt,
) -> None:
    """Find memories by meaning and by their words: the detected store plus global, unless told otherwise."""


@command(commands.list_)
def list_(
    store_arg: Optional[str] = typer.Argument(None, metavar="[STORE]", help="Store to list (default: detected)."),
    store: Optional[str] = StoreOpt,
    branch: Optional[str] = typer.Option(None, "--branch", "-b", help="Only memories scoped to this branch."),
    archived: bool = typer.Option(False, "--archived", help="List archived memories instead of live ones."),
    as_json: bool = JsonOpt,
) -> None:
    """List the memories of a store."""


@command(commands.show)
def show(
    label: str = typer.Argument(..., help="Label (or slug) of the memory."),
    store: Optional[str] = StoreOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Print one memory in full (detected store first, then global)."""


@command(commands.forget)
def forget(
    label: str = typer.Argument(..., help="Label (or slug) of the memory."),
    store: Optional[str] = StoreOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Delete one memory and its duplicate verdicts."""


@command(commands.stores)
def stores(as_json: bool = JsonOpt) -> None:
    """List stores with their memory counts and last update."""


@command(commands.reindex)
def reindex(store: Optional[str] = StoreOpt, as_json: bool = JsonOpt) -> None:
    """Embed memories that have no vector, or one from a different model."""


# Command groups defined in their own modules register themselves on `app`.
from . import cli_daemon, cli_git, cli_hygiene  # noqa: E402,F401
