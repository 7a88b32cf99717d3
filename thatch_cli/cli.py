"""The Typer command line: each command parses options, calls the core,
and hands the result to render. No logic lives here."""

from __future__ import annotations

import functools
import sys
from typing import Callable, Optional

import typer

from . import __version__, render
from .context import Context
from .errors import EXIT_INTERNAL, InvalidInput, ThatchError
from .output import Output

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


def current_context(typer_ctx: typer.Context) -> Context:
    """The Context a test passed as `obj`, else one for this process."""
    root = typer_ctx.find_root()
    if not isinstance(root.obj, Context):
        root.obj = Context.from_process()
    return root.obj


def command(name: str | None = None, **settings) -> Callable:
    """Register a command whose ThatchErrors become one line (or one JSON
    object) and an exit code, never a traceback."""

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def run(*args, _typer_ctx: typer.Context, **kwargs):
            ctx = current_context(_typer_ctx)
            out = Output(json_mode=bool(kwargs.get("as_json")), env=ctx.env)
            try:
                func(ctx, out, *args, **kwargs)
            except ThatchError as err:
                out.error(err)
                raise typer.Exit(err.exit_code)
            except KeyboardInterrupt:
                raise typer.Exit(130)
            except (typer.Exit, typer.Abort):
                raise
            except Exception as exc:  # a bug: still one line, with a way to see more
                if ctx.env.get("THATCH_DEBUG"):
                    raise
                out.error(ThatchError(f"internal error: {type(exc).__name__}: {exc} (set THATCH_DEBUG=1 for a traceback)"))
                raise typer.Exit(EXIT_INTERNAL)
            finally:
                ctx.close()

        # Typer reads the signature; hide the injected (ctx, out) parameters.
        import inspect

        params = list(inspect.signature(func).parameters.values())[2:]
        injected = inspect.Parameter("_typer_ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
        run.__signature__ = inspect.Signature([*params, injected])
        return app.command(name, **settings)(run)

    return decorate


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


def _read_content(value: str) -> str:
    if value != "-":
        return value
    if sys.stdin is None:
        raise InvalidInput("no standard input to read")
    return sys.stdin.read()


@command("remember")
def remember_cmd(
    ctx: Context,
    out: Output,
    first: str = typer.Argument(..., metavar="[LABEL] CONTENT", help="Label (optional) and content; '-' reads stdin."),
    second: Optional[str] = typer.Argument(None, hidden=True),
    store: Optional[str] = StoreOpt,
    branch: Optional[str] = typer.Option(None, "--branch", "-b", help="Scope the memory to this branch."),
    this_branch: bool = typer.Option(False, "--this-branch", help="Scope the memory to the current branch."),
    confidence: Optional[int] = typer.Option(None, "--confidence", "-c", help="How sure you are, 1-10."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing memory with this label."),
    archived: Optional[bool] = typer.Option(None, "--archived/--no-archived",
                                            help="Archive (or restore) the memory; required when updating an archived one."),
    as_json: bool = JsonOpt,
) -> None:
    """Save a memory. Without a label, the content's first heading or line becomes the label."""
    from .remember import remember

    label, content = (None, first) if second is None else (first, second)
    outcome = remember(ctx, _read_content(content), label, store=store, branch=branch, this_branch=this_branch,
                       confidence=confidence, overwrite=overwrite, archived=archived)
    render.remember(out, outcome)


@command("recall")
def recall_cmd(
    ctx: Context,
    out: Output,
    query: str = typer.Argument(..., help="What you are looking for, in your own words."),
    store: Optional[str] = typer.Option(None, "--store", "-s", help="Search only this store."),
    all_stores: bool = typer.Option(False, "--all-stores", "-a", help="Search every store."),
    branch: Optional[str] = typer.Option(None, "--branch", "-b", help="Include this branch's memories instead of the current branch's."),
    limit: int = typer.Option(10, "--limit", "-n", help="Most results to show."),
    include_archived: bool = typer.Option(False, "--include-archived", help="Search archived memories too."),
    as_json: bool = JsonOpt,
) -> None:
    """Find memories by meaning (the detected store plus global by default)."""
    from .recall import recall

    if store and all_stores:
        raise InvalidInput("use either --store or --all-stores, not both")
    outcome = recall(ctx, query, store=store, all_stores=all_stores, branch=branch, limit=limit,
                     include_archived=include_archived)
    render.recall(out, outcome)


@command("list")
def list_cmd(
    ctx: Context,
    out: Output,
    store_arg: Optional[str] = typer.Argument(None, metavar="[STORE]", help="Store to list (default: detected)."),
    store: Optional[str] = StoreOpt,
    branch: Optional[str] = typer.Option(None, "--branch", "-b", help="Only memories scoped to this branch."),
    archived: bool = typer.Option(False, "--archived", help="List archived memories instead of live ones."),
    as_json: bool = JsonOpt,
) -> None:
    """List the memories of a store."""
    from .manage import list_memories

    name, memories = list_memories(ctx, store_arg or store, branch=branch, archived=archived)
    render.listing(out, name, memories)


@command("show")
def show_cmd(
    ctx: Context,
    out: Output,
    label: str = typer.Argument(..., help="Label (or slug) of the memory."),
    store: Optional[str] = StoreOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Print one memory in full."""
    from .manage import show

    render.show(out, show(ctx, label, store))


@command("forget")
def forget_cmd(
    ctx: Context,
    out: Output,
    label: str = typer.Argument(..., help="Label (or slug) of the memory."),
    store: Optional[str] = StoreOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Delete one memory (and its duplicate verdicts)."""
    from .manage import forget

    render.forgot(out, forget(ctx, label, store))


@command("stores")
def stores_cmd(ctx: Context, out: Output, as_json: bool = JsonOpt) -> None:
    """List stores with their memory counts and last update."""
    from .manage import stores

    render.stores(out, stores(ctx))


@command("reindex")
def reindex_cmd(ctx: Context, out: Output, store: Optional[str] = StoreOpt, as_json: bool = JsonOpt) -> None:
    """Embed memories that have no vector, or one from a different model."""
    from .reindex import reindex

    progress = None
    if out.rich_stderr and not out.json_mode:
        progress = _progress_bar()
    try:
        outcome = reindex(ctx, store, progress=progress)
    finally:
        if progress:
            progress.close()
    render.reindexed(out, outcome)


def _progress_bar():
    from .progress import ProgressBar

    return ProgressBar("Embedding")
