"""Declaring commands in Typer's vocabulary without importing Typer.

A command module (cli/memories.py, cli/dedup.py, ...) holds each command's
declaration, body and output in one function:

    @command("show")
    def show(ctx, out, *, label: Annotated[str, Argument(help="...")], store: Store = None,
             as_json: Json = False) -> None:
        ...

`Option(...)` and `Argument(...)` take exactly the arguments of
`typer.Option` / `typer.Argument` and record the call; cli/app.py replays
it when it builds the Typer app, which stays the one definition of the
command line (help, usage errors, and the exported spec the fast path
parses are all Typer's). Recording instead of calling is what lets the fast
path import a command module, and run its body, without paying ~100 ms
for Typer and pydantic.

The first two parameters of every command are the Context and the Output
(cli/output.py); the rest are its command-line parameters.

Nothing here imports typing until the Typer app is built: a light command
imports its module, whose annotations stay unevaluated strings. A module
whose commands must stay light imports the shared aliases below (Json,
Store, ...) and typing's names under TYPE_CHECKING only; cli/app.py
evaluates every annotation with `annotation_names()` in scope.
"""

from __future__ import annotations

from ..memory.fields import brief_keys, full_keys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any


class Deferred:
    """A recorded `typer.Option(...)` or `typer.Argument(...)` call."""

    __slots__ = ("args", "choices", "complete", "factory", "kwargs")

    def __init__(self, factory: str, args: tuple, kwargs: dict[str, Any], choices: Sequence[str] | None,
                 complete: str | None = None) -> None:
        self.factory, self.args, self.kwargs, self.choices = factory, args, kwargs, choices
        self.complete = complete

    def build(self, typer_module) -> Any:
        info = getattr(typer_module, self.factory)(*self.args, **self.kwargs)
        if self.complete:
            # What shell completion offers for the value (integrations/completion_tree.py),
            # when the parameter's name does not say it (rename's OLD is a label).
            info.thatch_complete = self.complete
        if self.choices:
            # The values are checked by the library (support/validate.py), with the
            # same one-line error on every front door; Typer only shows
            # and exports them (help, completion, man page). An option shows
            # them as its value; an argument keeps its name, and its help
            # names them.
            info.thatch_choices = tuple(self.choices)
            if self.factory == "Option" or info.metavar is None:
                info.metavar = "[" + "|".join(self.choices) + "]"
        return info


def Option(*param_decls: str, choices: Sequence[str] | None = None, complete: str | None = None,
           **settings: Any) -> Deferred:
    """typer.Option(*param_decls, **settings); `choices` lists the values the
    option takes (a plain str reaches the command); `complete` names what
    shell completion offers for it: labels, stores, branches, settings or
    commands."""
    return Deferred("Option", param_decls, settings, choices, complete)


def Argument(*, choices: Sequence[str] | None = None, complete: str | None = None, **settings: Any) -> Deferred:
    """typer.Argument(**settings); `choices` and `complete` as for Option."""
    return Deferred("Argument", (), settings, choices, complete)


class Command:
    __slots__ = ("examples", "function", "group", "json", "name", "notes", "settings")

    def __init__(self, name: str, group: str | None, function: Callable, settings: dict[str, Any],
                 examples: Sequence[str] = (), json: str | None = None, notes: str | None = None) -> None:
        self.name, self.group, self.function, self.settings = name, group, function, settings
        self.examples, self.json, self.notes = list(examples), json, notes

    @property
    def path(self) -> str:
        return f"{self.group} {self.name}" if self.group else self.name

    def epilog(self) -> str | None:
        """The end of the command's help: notes, its examples and its JSON keys."""
        parts = [self.notes] if self.notes else []
        if self.examples:
            parts.append("Examples:\n" + "\n".join(f"  {line}" for line in self.examples))
        if self.json:
            parts.append(f"JSON (--json): {self.json}")
        return "\n\n".join(parts) or None


COMMANDS: list[Command] = []
GROUPS: dict[str, str] = {}  # group name -> help


def group(name: str, help: str) -> str:
    """Declare a command group (`thatch NAME ...`); returns its name."""
    GROUPS[name] = help
    return name


def command(name: str, *, group: str | None = None, examples: Sequence[str] = (), json: str | None = None,
            notes: str | None = None, **settings: Any) -> Callable[[Callable], Callable]:
    """Register the decorated function as command `name` (of `group`).
    `notes` (a paragraph), `examples` (command lines) and `json` (its --json
    keys) end its help and its man page section; `settings` go to Typer's
    command() (hidden, ...)."""

    def register(function: Callable) -> Callable:
        COMMANDS.append(Command(name, group, function, settings, examples, json, notes))
        return function

    return register


def _shared() -> dict[str, Any]:
    """Parameters many commands share. A command with a `store` parameter also
    gets --global (cli/app.py adds it; cli/run.py turns it into store="global")."""
    from typing import Annotated

    return {
        "Json": Annotated[bool, Option("--json", help="Print JSON with stable keys (listed below); errors too.")],
        "Store": Annotated[str | None, Option("--store", "-s", metavar="STORE",
                                                 help="Store to use instead of the detected one (also THATCH_STORE).")],
        "Label": Annotated[str, Argument(metavar="LABEL", help="Label (or slug) of the memory.")],
        # A positional STORE (the original thatch's habit); cli/run.py merges it into
        # `store`, so a command declares `store_arg: StoreArg = None` and reads `store`.
        "StoreArg": Annotated[str | None, Argument(metavar="STORE", show_default=False,
                                                      help="Store to use (the same as --store).")],
        # Stand-ins for one option per declared field (field_options): cli/app.py
        # puts those in their place and cli/run.py gathers them back into a dict.
        "Filtered": Annotated[dict | None, "filtered"],
        "Given": Annotated[dict | None, "given"],
    }


# The parameters that stand for one option per field (memory/fields.py):
# `filtered` for each filterable field (list --pinned, recall --tag), `given`
# for each field a save sets (remember --tag).
FIELD_ROLES = ("filtered", "given")


def field_options(role: str) -> list[tuple[str, Any, Any]]:
    """(parameter name, annotation, default) of each option `role` stands
    for: a flag's is a switch, a list's a repeatable value."""
    from typing import Annotated

    from ..memory.fields import FILTERED, GIVEN

    found: list[tuple[str, Any, Any]] = []
    for f in FILTERED if role == "filtered" else GIVEN:
        help = (f.filter if role == "filtered" else f.given) or ""
        if f.kind == "flag":
            found.append((f"{role}_{f.name}", Annotated[bool, Option(f.option, help=help)], False))
        else:
            option = Option(f.option, metavar=(f.item or f.name).upper(), complete=f.complete, show_default=False,
                            help=f"{help} (repeatable)")
            found.append((f"{role}_{f.name}", Annotated[list[str] | None, option], None))
    return found


_SHARED: dict[str, Any] = {}


def annotation_names() -> dict[str, Any]:
    """What the commands' annotations may name without importing it at run
    time: typing's Annotated and Optional, the Context and the Output, and
    the shared parameters."""
    import typing

    from ..ops.context import Context
    from .output import Output

    if not _SHARED:
        _SHARED.update(_shared())
    return {"Annotated": typing.Annotated, "Optional": typing.Optional, "Context": Context, "Output": Output,
            **_SHARED}


def __getattr__(name: str) -> Any:
    """`from .declare import Json` at run time (modules that are not light)."""
    if name in ("Json", "Store", "Label", "StoreArg", "Filtered", "Given"):
        return annotation_names()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The JSON shapes of one memory, which many commands' keys refer to (memory/fields.py).
BRIEF = f"a brief: {brief_keys()}"
FULL = f"a brief plus {full_keys()}"


