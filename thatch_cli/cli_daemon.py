"""Commands of the daemon area, registered on the app defined in cli.py:
`daemon start|stop|status` (a sub-app) and the bulk `export` / `import`.
Bodies live in thatch_cli.daemon.commands (typer-free)."""

from __future__ import annotations

from typing import Optional

import typer

from .cli import JsonOpt, app, command
from .daemon import commands as impl

daemon_app = typer.Typer(
    name="daemon",
    help="The background process that keeps the embedding model loaded (started automatically).",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(daemon_app, name="daemon")


@command(impl.daemon_start, "start", group=daemon_app)
def daemon_start(as_json: bool = JsonOpt) -> None:
    """Start the daemon (if needed) and wait until its model is loaded."""


@command(impl.daemon_stop, "stop", group=daemon_app)
def daemon_stop(as_json: bool = JsonOpt) -> None:
    """Stop the daemon; the next command that needs a vector starts it again."""


@command(impl.daemon_status, "status", group=daemon_app)
def daemon_status(as_json: bool = JsonOpt) -> None:
    """Show pid, model, thatch version, uptime, resident memory and requests served."""


@command(impl.export)
def export(
    store: Optional[str] = typer.Option(None, "--store", "-s", help="Store to export (default: detected)."),
    all_stores: bool = typer.Option(False, "--all", "-a", help="Export every store."),
    with_vectors: bool = typer.Option(False, "--with-vectors",
                                      help="Include embeddings (base64 little-endian float32)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write to FILE instead of stdout."),
    as_json: bool = JsonOpt,
) -> None:
    """Export memories as JSONL, one memory per line with every column."""


@command(impl.import_)
def import_(
    source: str = typer.Argument(..., metavar="FILE", help="JSONL file to import ('-' reads stdin)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace memories whose label already exists."),
    store: Optional[str] = typer.Option(None, "--store", "-s", help="Import every memory into this store."),
    as_json: bool = JsonOpt,
) -> None:
    """Import memories from JSONL (as written by export); embeds those without a usable vector."""
