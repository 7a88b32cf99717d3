"""The command tree the completion scripts are written from: commands,
their options and arguments, and what each value completes to, built from
the CLI definitions (the Typer app, or the same data as cli/spec.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..memory.fields import COMPLETED

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: completion never imports typing
if TYPE_CHECKING:
    from collections.abc import Iterator


@dataclass
class Option:
    names: list[str]  # every spelling that sets it, long first (e.g. --store, -s)
    help: str
    kind: str  # "flag", or what its value completes to: stores labels branches choices files none
    multiple: bool = False
    negations: list[str] = field(default_factory=list)  # --no-x of a --x/--no-x flag
    metavar: str = "VALUE"
    choices: tuple[str, ...] = ()  # the fixed values of kind "choices"


@dataclass
class Argument:
    name: str
    help: str
    kind: str
    required: bool
    choices: tuple[str, ...] = ()


@dataclass
class Node:
    path: str  # "" for thatch itself, "dedup keep" for a nested command
    help: str
    options: list[Option] = field(default_factory=list)
    arguments: list[Argument] = field(default_factory=list)
    children: dict[str, "Node"] = field(default_factory=dict)

    @property
    def is_group(self) -> bool:
        return bool(self.children)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children.values():
            yield from child.walk()


HELP_OPTION = Option(["--help", "-h"], "Show help and exit.", "flag")
VERSION_OPTION = Option(["--version", "-V", "-v"], "Show the version and exit.", "flag")


def value_kind(param: dict) -> str:
    """What a parameter's value completes to: its declared choices (cli.one_of),
    else a kind from its name, since the CLI names a parameter after the
    field it takes (store, label, branch: from_branch, label_a ...)."""
    if param["flag"]:
        return "flag"
    if param.get("choices") or param.get("complete") in FIXED:
        return "choices"
    if param.get("complete"):
        return param["complete"]
    name = param["name"].lower().strip("_")
    for kind, completed in COMPLETED.items():  # a field `thatch _complete` offers (memory/fields.py)
        if name.startswith(completed.name) or name.endswith(completed.name):
            return kind
    metavar = (param.get("metavar") or "").strip("[]").upper()
    if re.search(r"(path|file|dir|output|input|source)", name) or metavar in ("PATH", "FILE", "DIR"):
        return "files"
    return "none"


def summary(text: str) -> str:
    """First line of a help text, as the one-line description shells show."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line.strip()


_CHOICE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+/-]*")


def _setting_keys() -> tuple[str, ...]:
    from ..support.settings import SETTINGS

    return tuple(SETTINGS)


# Declared completions (cli/declare.py `complete=`) that are fixed lists, known when
# the scripts are generated: `commands` is filled in by tree() from the tree itself.
FIXED = {"settings": _setting_keys, "commands": lambda: ()}


def choices(param: dict) -> tuple[str, ...]:
    """A parameter's fixed values, checked to need no quoting in any shell's list."""
    values = tuple(param.get("choices") or ())
    if not values and param.get("complete") in FIXED:
        values = FIXED[param["complete"]]()
    for value in values:
        if not _CHOICE.fullmatch(value):
            raise ValueError(f"choice {value!r} of {param['name']} needs quoting; use plain words")
    return values


def _metavar(param: dict) -> str:
    metavar = (param.get("metavar") or "").strip("[]. ")
    if metavar and not param.get("choices"):  # a choices metavar ([a|b]) lists values, not a name
        return metavar
    if param["type"] in ("int", "float"):
        return "N"
    return param["name"].strip("_").upper()


def tree(definitions: dict) -> Node:
    """The command tree from CLI definitions: cli/spec.py's data, or the
    same read from the Typer app (gen/cli_model.py)."""
    root = Node("", "A local, git-aware memory store for coding agents.", [HELP_OPTION, VERSION_OPTION])
    groups = definitions["groups"]
    for path, spec in sorted(definitions["commands"].items()):
        words = path.split()
        if spec.get("hidden") or any(w.startswith("_") for w in words):
            continue
        node = root
        for depth, word in enumerate(words[:-1]):
            key = " ".join(words[: depth + 1])
            if word not in node.children:
                node.children[word] = Node(key, groups.get(key, ""), [HELP_OPTION])
            node = node.children[word]
        leaf = Node(path, spec["help"])
        for param in spec["params"]:
            if param["kind"] == "argument":
                leaf.arguments.append(Argument(_metavar(param).lower(), param["help"], value_kind(param),
                                               bool(param["required"]), choices(param)))
            elif not param["hidden"]:
                leaf.options.append(Option(
                    names=sorted(param["opts"], key=lambda o: (not o.startswith("--"), o)),
                    help=param["help"],
                    kind=value_kind(param),
                    multiple=bool(param["multiple"]),
                    negations=list(param["secondary_opts"]),
                    metavar=_metavar(param),
                    choices=choices(param),
                ))
        leaf.options.append(HELP_OPTION)
        node.children[words[-1]] = leaf
    # `thatch help COMMAND` completes the commands themselves.
    names = tuple(sorted(root.children))
    for node in root.walk():
        for argument in node.arguments:
            if argument.kind == "choices" and not argument.choices and node.path == "help":
                argument.choices = names
    return root
