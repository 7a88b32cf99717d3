"""The Typer app: the one definition of thatch's command line, built from
the commands the modules of this package declare (cli/declare.py).

Typer renders help, reports usage errors (as one line, see `main`), and is
exported to cli/spec.json, completions and the man page (`python -m
thatch_cli.gen`). Well-formed command lines usually never get here: the
fast path (cli/fastpath.py) parses them against that exported spec.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from contextlib import redirect_stderr, redirect_stdout
from typing import Annotated, Any, get_args, get_origin

import typer

from .. import __version__
from ..context import Context
from ..errors import UsageError
from . import declare
from .output import Output
from .run import run

# The modules that declare commands, in the order help lists their commands.
MODULES = ("memories", "recall", "tidy", "dedup", "branches", "transfer", "shell", "githooks", "daemon", "agents")

HELP = "A local, git-aware memory store for coding agents and the people who work beside them."
_SETTINGS = {"help_option_names": ["-h", "--help"]}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"thatch {__version__}")
        raise typer.Exit()


def _root(version: Annotated[bool, typer.Option("--version", "-V", "-v", callback=_version, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    """Save labelled notes for later (remember) and find them by meaning (recall)."""


def _typer_annotation(annotation: Any) -> Any:
    """Annotated[T, Deferred] -> Annotated[T, typer.Option/Argument(...)]."""
    if get_origin(annotation) is not Annotated:
        raise TypeError(f"command parameters must be Annotated[type, Option(...) | Argument(...)]: {annotation!r}")
    base, *extras = get_args(annotation)
    return Annotated[(base, *[e.build(typer) if isinstance(e, declare.Deferred) else e for e in extras])]


def _register(target: typer.Typer, command: declare.Command) -> None:
    function = command.function
    declared = list(inspect.signature(function, eval_str=True).parameters.values())[2:]  # after ctx, out
    params = [p.replace(annotation=_typer_annotation(p.annotation), kind=inspect.Parameter.KEYWORD_ONLY)
              for p in declared]

    def invoke(*, _typer_ctx: typer.Context, **options: Any) -> None:
        root = _typer_ctx.find_root()
        # main() passes the Context to use (tests pass their own); a bare click run builds one.
        ctx = root.obj if isinstance(root.obj, Context) else Context.from_process()
        code = run(function, ctx, options)
        if code:
            raise typer.Exit(code)

    marker = inspect.Parameter("_typer_ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)
    invoke.__signature__ = inspect.Signature([*params, marker])  # type: ignore[attr-defined]
    invoke.__annotations__ = {p.name: p.annotation for p in params} | {"_typer_ctx": typer.Context}
    invoke.__doc__, invoke.__name__ = function.__doc__, function.__name__
    invoke.thatch_impl = f"{function.__module__}:{function.__qualname__}"  # type: ignore[attr-defined]
    target.command(command.name, **command.settings)(invoke)


def build() -> typer.Typer:
    for name in MODULES:
        importlib.import_module(f"{__package__}.{name}")
    root = typer.Typer(name="thatch", help=HELP, no_args_is_help=True, add_completion=False,
                       pretty_exceptions_enable=False, context_settings=_SETTINGS)
    root.callback()(_root)
    groups = {}
    for name, text in declare.GROUPS.items():
        groups[name] = typer.Typer(help=text, no_args_is_help=True, context_settings=_SETTINGS)
        root.add_typer(groups[name], name=name)
    for command in declare.COMMANDS:
        _register(groups[command.group] if command.group else root, command)
    return root


app = build()


def main(argv: list[str], ctx: Context) -> int:
    """Run argv through Typer with thatch's error policy: a usage error is
    one line on stderr (one compact JSON object on stdout with --json) and
    exit 2, never a box. Help goes to ctx's streams."""
    from typer._click.exceptions import NoArgsIsHelpError, UsageError as ClickUsageError

    command = typer.main.get_command(app)
    stdout, stderr = ctx.stdout or sys.stdout, ctx.stderr or sys.stderr
    try:
        with redirect_stdout(stdout), redirect_stderr(stderr):
            result = command.main(args=list(argv), prog_name="thatch", obj=ctx, standalone_mode=False)
        return result if isinstance(result, int) else 0
    except NoArgsIsHelpError as exc:  # `thatch` or `thatch dedup` alone: their help
        stdout.write(exc.format_message() + "\n")
        return 0
    except ClickUsageError as exc:
        return usage_error(exc, argv, ctx)
    except typer.Abort:
        return 130


def usage_error(exc: Any, argv: list[str], ctx: Context) -> int:
    where = exc.ctx.command_path if exc.ctx is not None else "thatch"
    message = exc.format_message()
    err = UsageError(f"{message[:1].lower()}{message[1:]} (see '{where} --help')")
    Output(json_mode="--json" in argv, env=ctx.env, stdout=ctx.stdout, stderr=ctx.stderr).error(err)
    return err.exit_code
