"""`thatch export | import`: memories as JSONL, one per line with every
column (ops/transfer.py)."""

from __future__ import annotations

from typing import Annotated, Optional

from ..ops.context import Context
from ..support.errors import EXIT_ATTENTION, InvalidInput
from .declare import Argument, Json, Option, command
from .output import Output


@command("export", examples=[
    "thatch export > widget.jsonl",
    "thatch export --all-stores --with-vectors -o backup.jsonl",
], json="with --output: exported, stores, with_vectors, output, unreadable (rows left out), rules (learned rules);"
        " without --output, stdout is the JSONL itself")
def export(
    ctx: Context, out: Output, *,
    store: Annotated[Optional[str], Option("--store", "-s", metavar="STORE",
                                           help="Store to export (default: detected).")] = None,
    all_stores: Annotated[bool, Option("--all-stores", "--all", "-a", help="Export every store.")] = False,
    with_vectors: Annotated[bool, Option("--with-vectors",
                                         help="Include embeddings (base64 little-endian float32).")] = False,
    output: Annotated[Optional[str], Option("--output", "-o", metavar="FILE",
                                            help="Write to FILE instead of stdout.")] = None,
    as_json: Json = False,
) -> int:
    """Export memories as JSONL, one memory per line with every column, then dedup verdicts, earlier versions, anchors and the stores' learned rules (one line each). A row that cannot be read (text that is not UTF-8) is left out and named (exit 5); everything else is exported."""
    from ..ops import transfer

    if as_json and not output:
        raise InvalidInput("--json needs --output FILE (without it, the JSONL export itself goes to stdout)")
    stores = transfer.export_stores(ctx, store, all_stores)
    if output and output != "-":
        outcome = transfer.export_to_file(ctx, output, stores, with_vectors=with_vectors)
    else:
        outcome = transfer.export(ctx, out.stdout, stores, with_vectors=with_vectors)
        out.stdout.flush()
    code = EXIT_ATTENTION if outcome.unreadable else 0
    if outcome.unreadable:
        shown = ", ".join(outcome.unreadable[:3]) + (f" and {len(outcome.unreadable) - 3} more"
                                                      if len(outcome.unreadable) > 3 else "")
        out.notice(f"left out {len(outcome.unreadable)} row(s) that cannot be read (text that is not UTF-8): {shown};"
                   " everything else was exported")
    if not outcome.output and not out.rich_stderr:
        return code  # stdout is the data; stay quiet unless a person watches stderr
    if out.json_mode:
        out.json(outcome.to_json())
        return code
    what = f"{outcome.exported} memor{'y' if outcome.exported == 1 else 'ies'}"
    out.notice(f"exported {what} from {', '.join(outcome.stores) or 'no stores'}"
               + (f" and {outcome.rules} learned rule{'s' if outcome.rules != 1 else ''}" if outcome.rules else "")
               + (" with vectors" if outcome.with_vectors else "") + (f" to {outcome.output}" if outcome.output else ""))
    return code


@command("import", examples=[
    "thatch import widget.jsonl",
    "thatch import backup.jsonl --overwrite",
    "cat notes.jsonl | thatch import - --store team/notes",
], json="created, replaced, skipped, embedded, kept_vectors, without_vector, lines, model, error_count,"
        " errors (line, message), conflicts (line, store, slug), notices, verdicts, versions, anchors, rules"
        " (learned rules added)")
def import_(
    ctx: Context, out: Output, *,
    source: Annotated[str, Argument(metavar="FILE", help="JSONL file to import ('-' reads stdin).")],
    overwrite: Annotated[bool, Option("--overwrite", help="Replace memories whose label already exists.")] = False,
    store: Annotated[Optional[str], Option("--store", "-s", metavar="STORE",
                                           help="Import every memory into this store.")] = None,
    as_json: Json = False,
) -> int:
    """Import memories from JSONL (as written by export); embeds those without a usable vector."""
    import sys

    from ..memory import jsonl
    from ..ops import transfer
    from .progress import STEP, ProgressBar

    total = None
    if source == "-":
        stream = ctx.stdin or sys.stdin
        if stream is None or stream.closed:
            raise InvalidInput("no standard input to read")
        # Bytes where there are any, so each line is decoded (and a bad one reported) on its own.
        stream = getattr(stream, "buffer", stream)
    else:
        total = transfer.count_lines(source)
        try:
            stream = open(source, "rb")
        except OSError as exc:
            raise InvalidInput(f"cannot read {source}: {exc.strerror or exc}") from None
    try:
        with ProgressBar.for_output(out, "Importing", ctx) as progress:
            outcome = transfer.import_lines(ctx, jsonl.lines(stream), overwrite=overwrite, store=store, progress=progress,
                                            total=total,
                                            batch_size=STEP if isinstance(progress, ProgressBar) else transfer.BATCH)
    finally:
        if source != "-":
            stream.close()
    code = EXIT_ATTENTION if outcome.error_count else 0
    if out.json_mode:
        out.json(outcome.to_json())
        return code
    for notice in outcome.notices:
        out.notice(notice)
    out.line(f"Imported {outcome.created} new, replaced {outcome.replaced}, skipped {outcome.skipped};"
             f" embedded {outcome.embedded}, kept {outcome.kept_vectors} vectors"
             + (f", {outcome.without_vector} without a vector" if outcome.without_vector else "")
             + (f"; {outcome.verdicts} dedup verdicts" if outcome.verdicts else "")
             + (f"; {outcome.versions} earlier versions" if outcome.versions else "")
             + (f"; {outcome.anchors} anchors" if outcome.anchors else "")
             + (f"; {outcome.rules} learned rules" if outcome.rules else ""))
    if outcome.conflicts:
        first = outcome.conflicts[0]
        out.notice(f"{outcome.skipped} already existed (pass --overwrite to replace them), e.g. line "
                   f"{first['line']}: {first['store']}/{first['slug']}")
    for error in outcome.errors[:20]:
        out.notice(f"line {error['line']}: {error['message']}")
    if outcome.error_count > 20:
        out.notice(f"... and {outcome.error_count - 20} more errors (use --json for all)")
    return code
