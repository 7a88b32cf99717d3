"""Command bodies of the hygiene area (hygiene, duplicates, rescope, archive,
dedup, completion): typer-free `impl(ctx, out, **options)` functions, declared in
cli_hygiene.py and callable by the fast dispatcher."""

from __future__ import annotations

from . import hygiene_render as render
from .context import Context
from .errors import EXIT_ATTENTION, EXIT_OK, InvalidInput
from .output import Output


def hygiene(ctx: Context, out: Output, *, store: str | None, stale_days: int, as_json: bool) -> int:
    from .hygiene import report as build

    report = build(ctx, store, stale_days=stale_days)
    code = EXIT_OK if report.clean else EXIT_ATTENTION
    render.hygiene(out, report, code)
    return code


def duplicates(ctx: Context, out: Output, *, store: str | None, threshold: float, limit: int,
               as_json: bool) -> None:
    from .hygiene import duplicates as scan

    render.duplicates(out, scan(ctx, store, threshold=threshold, limit=limit))


def rescope(ctx: Context, out: Output, *, from_branch: str, to_branch: str | None, unscoped: bool,
            store: str | None, as_json: bool) -> None:
    from .hygiene import rescope as move

    if (to_branch is None) == (not unscoped):
        raise InvalidInput("give exactly one of --to BRANCH or --unscoped")
    render.rescoped(out, move(ctx, from_branch, None if unscoped else to_branch, store=store))


def archive(ctx: Context, out: Output, *, branch: str, store: str | None, as_json: bool) -> None:
    from .hygiene import archive as stow

    render.archived(out, stow(ctx, branch, store=store))


def dedup_keep(ctx: Context, out: Output, *, label_a: str, label_b: str, store: str | None, as_json: bool) -> None:
    from .hygiene import keep_both

    render.verdict(out, keep_both(ctx, label_a, label_b, store=store))


def dedup_mark(ctx: Context, out: Output, *, label_a: str, label_b: str, status: str, store: str | None,
               as_json: bool) -> None:
    from .hygiene import mark

    render.verdict(out, mark(ctx, label_a, label_b, status, store=store))


def dedup_list(ctx: Context, out: Output, *, store: str | None, as_json: bool) -> None:
    from .hygiene import list_verdicts

    render.verdicts(out, *list_verdicts(ctx, store))


def completion_install(ctx: Context, out: Output, *, shell: str | None, as_json: bool) -> None:
    from . import completion_install as installer

    chosen = installer.check_shell(shell) if shell else installer.detect_shell(ctx.env)
    render.completion_installed(out, installer.install(chosen, ctx.env))


def completion_show(ctx: Context, out: Output, *, shell: str, as_json: bool) -> None:
    from . import completion_install as installer

    name = installer.check_shell(shell)
    render.completion_script(out, name, installer.script(name))
