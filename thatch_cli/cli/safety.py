"""`thatch backup | restore | history | restore-memory`: copies of the whole
database, and earlier versions of one memory (ops/backup.py, ops/history.py)."""

from __future__ import annotations

from typing import Annotated, Optional

from ..ops.context import Context
from ..support.textsafe import one_line, shell_word
from .declare import Argument, Json, Option, Store, command
from .output import Output
from .render import Column, plural, table, tsv


@command("backup", examples=["thatch backup", "thatch backup ~/backups/thatch-$(date +%F).db"],
         json="backup, database, bytes, memories, tables, verified, removed (older backups removed: backup.keep)")
def backup(
    ctx: Context, out: Output, *,
    path: Annotated[Optional[str], Argument(metavar="[PATH]", show_default=False,
                                            help="File or directory to write (default: beside the database).")] = None,
    as_json: Json = False,
) -> None:
    """Copy the database to a verified backup file, while it stays in use (never overwrites a file).

    Backups thatch names (beside the database, or in a folder given as PATH) keep the newest 10 (setting backup.keep): older ones are removed, and the output says which. A file you name is never removed."""
    from ..ops.backup import backup as copy

    outcome = copy(ctx, path)
    if out.json_mode:
        out.json(outcome.to_json())
        return
    memories = outcome.counts.get("entries") or 0
    out.line(f"Backed up {plural(memories, 'memory', 'memories')} to {outcome.path}"
             " (verified: integrity check and row counts)")
    _removed(out, outcome.removed)


def _removed(out: Output, removed) -> None:
    if removed:
        out.line(f"Removed {plural(len(removed), 'older backup', 'older backups')} (backup.keep):"
                 f" {', '.join(p.name for p in removed)}")


@command("restore", examples=["thatch restore ~/backups/thatch-2026-11-30.db"],
         json="database, restored_from, previous_backup, previous_verified, memories, tables, removed (triggers,"
              " views and indexes left out), unknown_tables, pruned (older before-restore copies removed: backup.keep)")
def restore(
    ctx: Context, out: Output, *,
    path: Annotated[str, Argument(metavar="PATH", help="A backup file (from thatch backup).")],
    as_json: Json = False,
) -> None:
    """Replace the database with a verified backup; the current file is backed up first."""
    from ..ops.backup import restore as put_back

    outcome = put_back(ctx, path)
    if out.json_mode:
        out.json(outcome.to_json())
        return
    memories = outcome.counts.get("entries") or 0
    out.line(f"Restored {plural(memories, 'memory', 'memories')} from {outcome.source} into {outcome.database}")
    if outcome.removed:
        out.notice(f"left out what neither thatch nor the original thatch defines: {', '.join(outcome.removed)}"
                   " (the backup file still holds it)")
    if outcome.unknown_tables:
        out.notice(f"restored tables thatch does not know, as they are: {', '.join(outcome.unknown_tables)}")
    if outcome.previous:
        how = "verified backup" if outcome.previous_verified else "byte-for-byte copy (it could not be read)"
        out.line(f"The database it replaced is kept as {outcome.previous} ({how});"
                 f" undo with: thatch restore {shell_word(str(outcome.previous))}")
    _removed(out, outcome.pruned)


@command("history", examples=['thatch history "Release process"', 'thatch history "Release process" --json'],
         json="store, slug, label, current (a full memory or null), forgotten, versions (version, event, recorded_at,"
              " changes, memory)")
def history(
    ctx: Context, out: Output, *,
    label: Annotated[str, Argument(metavar="LABEL", help="Label (or slug) of the memory, current or forgotten.")],
    store: Store = None,
    as_json: Json = False,
) -> None:
    """List the earlier versions of a memory kept by overwrites, edits, renames, archiving and forgetting."""
    from ..ops.history import history as versions_of

    found = versions_of(ctx, label, store)
    if out.json_mode:
        out.json(found.to_json())
        return
    state = "forgotten" if found.current is None else f"current version updated {found.current.updated_at}"
    if out.rich:
        from .render import cut, items, paint

        out.stdout.write("\n".join([paint(out, cut(one_line(found.label), out.width), "label"),
                                    *items(out, [(found.store, "store"), (f"slug {found.slug}", "dim"),
                                                 (state, "warn" if found.current is None else "dim")])]) + "\n")
    else:
        out.line(f"{found.label} ({found.store}, slug {found.slug}): {state}")
    if not found.versions:
        out.line("No earlier versions kept.")
        return
    if out.rich:
        from ..support.textsafe import snippet

        # Timestamps stay whole; what changed, the label and the text give way, cut on words.
        table(out, [Column("version", whole=True, right=True), Column("replaced at", "dim", whole=True),
                    Column("then", give=1, least=10), Column("label", "label", give=1, least=16),
                    Column("text", give=2, least=0.35)],
              [(str(v.number), v.recorded_at, ", ".join(v.changes), one_line(v.memory.label),
                snippet(v.memory.body, out.width)) for v in reversed(found.versions)])
    else:
        tsv(out, [(str(v.number), v.recorded_at, ", ".join(v.changes), one_line(v.memory.label),
                   one_line(v.memory.body)[:60]) for v in reversed(found.versions)])
    hint = f"thatch restore-memory {shell_word(found.label)}" + (f" --store {shell_word(found.store)}"
                                                               if store else "")
    out.notice(f"bring one back with: {hint} --version N")


@command("restore-memory", examples=['thatch restore-memory "Release process"',
                                     'thatch restore-memory "Release process" --version 2'],
         json="status, version, memory (a full memory), previous (a brief or null)")
def restore_memory(
    ctx: Context, out: Output, *,
    label: Annotated[str, Argument(metavar="LABEL", help="Label (or slug) of the memory, current or forgotten.")],
    version: Annotated[Optional[int], Option("--version", metavar="N",
                                             help="Version to bring back (see thatch history; default: the newest).")
                       ] = None,
    store: Store = None,
    as_json: Json = False,
) -> None:
    """Bring back a forgotten memory or an earlier version of one (undoes the last change by default)."""
    from ..ops.history import restore_memory as bring_back

    outcome = bring_back(ctx, label, store, version)
    if out.json_mode:
        out.json(outcome.to_json())
        return
    m = outcome.memory
    if outcome.status == "unchanged":
        out.line(f"{m.label!r} in {m.store} already is version {outcome.version}; nothing changed")
        return
    if outcome.previous is None:
        out.line(f"Brought back forgotten {m.label!r} in {m.store} (version {outcome.version})")
    else:
        out.line(f"Restored {m.label!r} in {m.store} to version {outcome.version};"
                 " the version it replaced is kept in its history")
