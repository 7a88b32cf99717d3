"""The Typer app: the one definition of thatch's command line, built from
the commands the modules of this package declare (cli/declare.py).

Typer renders help, reports usage errors (as one line, see `main`), and is
exported to cli/spec.py, completions and the man page (`python -m
thatch_cli.gen`). Well-formed command lines usually never get here: the
fast path (cli/fastpath.py) parses them against that exported spec.
"""

from __future__ import annotations

import errno
import importlib
import inspect
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from typing import Annotated, Any, get_args, get_origin

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

from .. import __version__
from ..ops.context import Context
from ..support.errors import UsageError
from . import declare
from .output import Output
from .run import run

# The modules that declare commands, in the order help lists their commands.
MODULES = ("memories", "tags", "rules", "recall", "search", "edit", "anchors", "tidy", "dedup", "branches", "transfer", "safety", "sync", "shell",
           "githooks", "daemon", "config", "agents", "activity", "status", "help")

# The sections of `thatch --help`, in order, and their commands in order: one
# order however the command modules happened to be imported (`thatch help`
# imports cli/help.py first). tests/cli/test_help_sections.py checks that every
# command has a section.
SECTIONS = (
    ("Memories", ("remember", "show", "list", "edit", "rename", "forget", "pin", "unpin", "tag", "untag", "archive",
                  "unarchive", "anchor", "unanchor", "history", "restore-memory")),
    ("Finding", ("recall", "search")),
    ("Tidying", ("hygiene", "duplicates", "dedup", "rescope", "reindex", "stores")),
    ("Team", ("sync", "private", "share", "export", "import")),
    ("Agents and shell", ("setup", "mcp", "rules", "activity", "pause", "resume", "init", "hooks", "completion")),
    ("Setup and maintenance", ("status", "config", "daemon", "backup", "restore", "help")),
)
_SECTION_OF = {name: section for section, names in SECTIONS for name in names}
_ORDER = {name: number for number, name in enumerate(_SECTION_OF)}

# Words people type for a command under another name (other tools' verbs):
# an unknown command suggests these before spelling neighbours.
ALIASES = {
    "rm": "forget", "remove": "forget", "delete": "forget", "del": "forget",
    "find": "recall", "query": "recall", "grep": "search", "ask": "recall", "lookup": "recall",
    "ls": "list", "add": "remember", "save": "remember", "new": "remember", "create": "remember", "note": "remember",
    "get": "show", "cat": "show", "view": "show", "read": "show", "open": "edit", "update": "edit",
    "mv": "rename", "move": "rename", "dedupe": "duplicates", "dupes": "duplicates", "doctor": "hygiene",
    "check": "hygiene", "version": "--version",
}

HELP = "A local, git-aware memory store for coding agents and the people who work beside them."
EPILOG = """Examples:
  thatch remember "Release process" "Tag, build the wheel, twine upload."
  thatch recall "how do I publish a new version?"
  thatch help recall

Errors are one line on stderr, "thatch: error: MESSAGE", with exit 2 (invalid input or usage), 3 (not found), 4 (conflict), 5 (attention), 6 (database, a full disk included), 7 (try again later: offline), 8 (refused: the remote does not accept your credentials) or 1 (a bug); with --json, one compact JSON object on stdout instead: {"error": {"code", "message", "exit_code", ...}}."""
_SETTINGS = {"help_option_names": ["-h", "--help"]}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"thatch {__version__}")
        raise typer.Exit()


def _root(version: Annotated[bool, typer.Option("--version", "-V", "-v", callback=_version, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    """Save labelled notes for later (remember) and find them by meaning (recall)."""


def _typer_annotation(annotation: Any) -> Any:
    """Annotated[T, Deferred] -> Annotated[T, typer.Option/Argument(...)].
    A flag shows no value in help (no `<bool>`), and an option that names
    no metavar shows its long name in capitals (`--limit N`, not `<int>`)."""
    if get_origin(annotation) is not Annotated:
        raise TypeError(f"command parameters must be Annotated[type, Option(...) | Argument(...)]: {annotation!r}")
    base, *extras = get_args(annotation)
    built = []
    for extra in extras:
        if isinstance(extra, declare.Deferred):
            extra = extra.build(typer)
            if isinstance(extra, typer.models.OptionInfo) and extra.metavar is None:
                flag = bool in (base, *get_args(base))
                long = next((d for d in extra.param_decls or () if d.startswith("--")), "--value")
                extra.metavar = "" if flag else long[2:].split("/")[0].upper().replace("-", "_")
        built.append(extra)
    return Annotated[(base, *built)]


def _no_type(ctx: Any) -> None:
    return None


def _bare_name(param: TyperArgument) -> Callable[[], str]:
    """`LABEL` for the usage line, where Typer writes `{LABEL}`."""
    return lambda: param.display_name_raw


class _NamedValues:
    """Help that shows a value's name and nothing else: an argument's name
    (LABEL) says what it takes, and a flag takes nothing (no `<str>`, `<bool>`).
    Usage lines read `LABEL [STORE]`, as in git and gh, not `{LABEL}`."""

    def get_params(self, ctx: Any) -> list:
        params = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if isinstance(param, TyperArgument) or getattr(param, "is_flag", False):
                param.display_type_rich = _no_type
            if isinstance(param, TyperArgument) and param.required:
                # Typer builds the parameter, so only this instance's method can be replaced.
                param._usage_display_name = _bare_name(param)  # type: ignore[method-assign]
        return params


class ThatchCommand(_NamedValues, TyperCommand):
    pass


class ThatchGroup(_NamedValues, TyperGroup):
    """A command group whose unknown commands suggest the one meant:
    another tool's verb for it (`rm` -> forget), else a spelling neighbour."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        from typer._click.exceptions import UsageError as ClickUsageError

        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            from ..support.suggest import close

            commands = [n for n, c in self.commands.items() if not c.hidden]
            found = [ALIASES[name]] if ctx.parent is None and name in ALIASES else close(name, commands)
            hint = "; did you mean " + " or ".join(f"'{ctx.command_path} {f}'" for f in found) + "?" if found else ""
            raise ClickUsageError(f"unknown command {name!r}{hint}", ctx)
        return super().resolve_command(ctx, args)

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda name: _ORDER.get(name, len(_ORDER))) if ctx.parent is None else names


def _global_option() -> inspect.Parameter:
    return inspect.Parameter("global_store", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Annotated[
        bool, typer.Option("--global", "-g", metavar="", help="Short for --store global.")])


def _register(target: typer.Typer, command: declare.Command, section: str | None) -> None:
    function = command.function
    # Light command modules import typing's names and the shared parameters
    # only for type checkers (cli/declare.py): they are supplied here.
    names = declare.annotation_names()
    declared = list(inspect.signature(function, eval_str=True, locals=names).parameters.values())[2:]  # after ctx, out
    params = []
    for p in declared:
        if p.name in declare.FIELD_ROLES:  # one option per declared field, in its place
            params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                         annotation=_typer_annotation(annotation))
                       for name, annotation, default in declare.field_options(p.name)]
        else:
            params.append(p.replace(annotation=_typer_annotation(p.annotation), kind=inspect.Parameter.KEYWORD_ONLY))
    if "store" in {p.name for p in declared}:
        # Every command that takes --store takes --global (run.py merges them).
        at = next(i for i, p in enumerate(params) if p.name == "store") + 1
        params.insert(at, _global_option())

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
    invoke.thatch_examples, invoke.thatch_json = command.examples, command.json  # type: ignore[attr-defined]
    target.command(command.name, cls=ThatchCommand, epilog=command.epilog(), rich_help_panel=section,
                   **command.settings)(invoke)


def build() -> typer.Typer:
    for name in MODULES:
        importlib.import_module(f"{__package__}.{name}")
    root = typer.Typer(name="thatch", help=HELP, epilog=EPILOG, no_args_is_help=True, add_completion=False,
                       pretty_exceptions_enable=False, context_settings=_SETTINGS, cls=ThatchGroup)
    root.callback()(_root)
    groups = {}
    for name, text in declare.GROUPS.items():
        groups[name] = typer.Typer(help=text, no_args_is_help=True, context_settings=_SETTINGS, cls=ThatchGroup)
        root.add_typer(groups[name], name=name, rich_help_panel=_SECTION_OF.get(name))
    for command in declare.COMMANDS:
        _register(groups[command.group] if command.group else root, command,
                  None if command.group else _SECTION_OF.get(command.name))
    return root


app = build()


def main(argv: list[str], ctx: Context) -> int:
    """Run argv through Typer with thatch's error policy: a usage error is
    one line on stderr (one compact JSON object on stdout with --json) and
    exit 2, never a box. Help goes to ctx's streams."""
    from typer._click.exceptions import NoArgsIsHelpError
    from typer._click.exceptions import UsageError as ClickUsageError

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
    except SystemExit as exc:
        # click exits 1 when the reader of its output went away (`thatch --help | head -1`):
        # a closed pipe is the reader's choice, not a failure.
        cause = exc.__context__
        if isinstance(cause, OSError) and cause.errno == errno.EPIPE:
            return 0
        raise


def usage_error(exc: Any, argv: list[str], ctx: Context) -> int:
    where = exc.ctx.command_path if exc.ctx is not None else "thatch"
    message = exc.format_message()
    err = UsageError(f"{message[:1].lower()}{message[1:]} (see '{where} --help')")
    Output(json_mode="--json" in argv, env=ctx.env, stdout=ctx.stdout, stderr=ctx.stderr).error(err)
    return err.exit_code
