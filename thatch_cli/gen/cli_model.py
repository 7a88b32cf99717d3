"""The Typer app as plain data: commands (nested groups as "a b"), their
parameters and help. The one place that reads Typer/click internals."""

from __future__ import annotations

from typing import Any, Iterator

import typer

from ..cli import app


def _type_name(param) -> str:
    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", str)
    return {bool: "bool", int: "int", float: "float"}.get(annotation, "str")


def _choices(param) -> list[str] | None:
    """The fixed values cli.one_of declared for the parameter, if any."""
    info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
    choices = getattr(info, "thatch_choices", None)
    return list(choices) if choices else None


def _param(param) -> dict[str, Any]:
    is_option = type(param).__name__.endswith("Option")
    default = param.default
    if not isinstance(default, (str, int, float, bool, type(None))):
        default = None
    return {
        "name": param.name,
        "kind": "option" if is_option else "argument",
        "opts": [o for o in param.opts if o.startswith("-")] if is_option else [],
        "secondary_opts": list(param.secondary_opts),
        "flag": bool(getattr(param, "is_flag", False)),
        "type": _type_name(param),
        "required": bool(param.required),
        "default": default,
        "multiple": bool(param.multiple),
        "hidden": bool(getattr(param, "hidden", False)),
        "metavar": param.metavar,
        "choices": _choices(param),
        "help": getattr(param, "help", None) or "",
    }


def _walk(group, prefix: str) -> Iterator[tuple[str, Any]]:
    for name, command in sorted(group.commands.items()):
        path = f"{prefix} {name}".strip()
        if hasattr(command, "commands"):
            yield from _walk(command, path)
        else:
            yield path, command


def commands() -> dict[str, dict[str, Any]]:
    root = typer.main.get_command(app)
    found: dict[str, dict[str, Any]] = {}
    for path, command in _walk(root, ""):
        found[path] = {
            "impl": getattr(command.callback, "thatch_impl", None),
            "help": (command.help or "").strip(),
            "hidden": bool(getattr(command, "hidden", False)),
            "params": [_param(p) for p in command.params if p.expose_value and p.name != "_typer_ctx"],
        }
    return found


def groups() -> dict[str, str]:
    """Command groups (e.g. "hooks") with their help."""
    root = typer.main.get_command(app)
    return {name: (cmd.help or "").strip() for name, cmd in sorted(root.commands.items()) if hasattr(cmd, "commands")}
