"""The Typer app as plain data: commands (nested groups as "a b"), their
parameters and help. The one place that reads Typer/click internals.

The fast path parses command lines against this data (cli/spec.py), so
everything that decides what a command line means must be here. Anything
Typer can express that the data cannot (an environment variable default, a
callback, a prompt, a custom type, a counted flag ...) raises `Unmirrored`
at export: it cannot silently hold on the Typer path only.
"""

from __future__ import annotations

from typing import Any, Iterator, get_args

import typer

from ..cli.app import app as thatch_app


class Unmirrored(Exception):
    """A parameter uses a Typer/click feature the fast path does not mirror."""


_TYPES = {str: "str", int: "int", float: "float", bool: "bool"}


def _fail(where: str, what: str) -> None:
    raise Unmirrored(f"{where}: {what} is not mirrored by the fast path (cli/fastpath.py);"
                     " express it in the command body, or teach gen/cli_model.py and the fast path")


def _type(param, where: str) -> tuple[str, float | None, float | None]:
    desc = param.type_descriptor
    annotation = desc.annotation
    if desc.is_list:
        inner = get_args(annotation)
        annotation = inner[0] if len(inner) == 1 else None
    for feature in ("is_tuple", "is_datetime", "is_path", "is_file", "is_choice"):
        if getattr(desc, feature):
            _fail(where, f"a {feature[3:]} parameter")
    if annotation not in _TYPES:
        _fail(where, f"the parameter type {annotation!r}")
    info = desc.parameter_info
    for feature in ("parser", "click_type", "autocompletion", "shell_complete"):
        if getattr(info, feature, None) is not None:
            _fail(where, f"a custom {feature}")
    if getattr(info, "clamp", False):
        _fail(where, "a clamped range")
    return _TYPES[annotation], info.min, info.max


def _check(param, where: str, *, last_argument: bool) -> None:
    if param.envvar:
        _fail(where, f"envvar {param.envvar!r}")
    if param.callback is not None:
        _fail(where, "a callback")
    if param.is_eager:
        _fail(where, "an eager parameter")
    if callable(param.default):
        _fail(where, "a default factory")
    if getattr(param, "prompt", None):
        _fail(where, "a prompt")
    if getattr(param, "count", False):
        _fail(where, "a counted flag")
    if param.nargs not in (1, -1):
        _fail(where, f"nargs={param.nargs}")
    if param.nargs == -1 and not (param.param_type_name == "argument" and last_argument):
        _fail(where, "a variadic parameter other than the last argument")
    flag_value = getattr(param, "flag_value", None)
    if getattr(param, "is_flag", False) and flag_value not in (True, False, None):
        _fail(where, f"flag_value={flag_value!r}")


def _choices(param) -> list[str] | None:
    """The fixed values a command declared for the parameter (cli/declare.py), if any."""
    info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
    choices = getattr(info, "thatch_choices", None)
    return list(choices) if choices else None


def _complete(param) -> str | None:
    """What completion offers for the parameter's value, when declared (cli/declare.py)."""
    info = getattr(getattr(param, "type_descriptor", None), "parameter_info", None)
    return getattr(info, "thatch_complete", None)


def _param(param, where: str, *, last_argument: bool) -> dict[str, Any]:
    _check(param, where, last_argument=last_argument)
    type_name, low, high = _type(param, where)
    is_option = param.param_type_name == "option"
    default = param.default
    if isinstance(default, (list, tuple)):
        default = list(default) if default else None
    if not isinstance(default, (str, int, float, bool, list, type(None))):
        _fail(where, f"the default {default!r}")
    return {
        "name": param.name,
        "kind": "option" if is_option else "argument",
        "opts": [o for o in param.opts if o.startswith("-")] if is_option else [],
        "secondary_opts": list(param.secondary_opts),
        "flag": bool(getattr(param, "is_flag", False)),
        "type": type_name,
        "min": low,
        "max": high,
        "required": bool(param.required),
        "default": default,
        "multiple": bool(param.multiple) or param.nargs == -1,
        "hidden": bool(getattr(param, "hidden", False)),
        "metavar": param.metavar,
        "choices": _choices(param),
        "complete": _complete(param),
        "help": getattr(param, "help", None) or "",
    }


def _walk(group, prefix: str) -> Iterator[tuple[str, Any]]:
    for name, command in sorted(group.commands.items()):
        path = f"{prefix} {name}".strip()
        if hasattr(command, "commands"):
            yield from _walk(command, path)
        else:
            yield path, command


_ALLOWED_SETTINGS = {"help_option_names"}


def _root(app: typer.Typer | None):
    return typer.main.get_command(app if app is not None else thatch_app)


def commands(app: typer.Typer | None = None) -> dict[str, dict[str, Any]]:
    """Every command of `app` (default: thatch's) as data; Unmirrored when
    a parameter uses something the fast path cannot follow."""
    root = _root(app)
    found: dict[str, dict[str, Any]] = {}
    for path, command in _walk(root, ""):
        unusual = set(command.context_settings) - _ALLOWED_SETTINGS
        if unusual:
            _fail(f"thatch {path}", f"context settings {sorted(unusual)}")
        params = [p for p in command.params if p.expose_value and p.name != "_typer_ctx"]
        arguments = [p for p in params if p.param_type_name == "argument"]
        found[path] = {
            "impl": getattr(command.callback, "thatch_impl", None),
            "help": (command.help or "").strip(),
            "epilog": (command.epilog or "").strip(),
            "examples": list(getattr(command.callback, "thatch_examples", None) or []),
            "json": getattr(command.callback, "thatch_json", None),
            "hidden": bool(getattr(command, "hidden", False)),
            "params": [_param(p, f"thatch {path} {p.name}", last_argument=bool(arguments) and p is arguments[-1])
                       for p in params],
        }
    return found


def groups(app: typer.Typer | None = None) -> dict[str, str]:
    """Command groups (e.g. "hooks") with their help."""
    root = _root(app)
    return {name: (cmd.help or "").strip() for name, cmd in sorted(root.commands.items()) if hasattr(cmd, "commands")}
