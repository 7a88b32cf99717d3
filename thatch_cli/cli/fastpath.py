"""Run a command without importing Typer and pydantic (about 150 ms).

Arguments are parsed against spec.py, which `python -m thatch_cli.gen`
exports from the Typer app (cli/app.py), so both paths accept the same
command lines with the same values; generated tests check every command and
option, error cases included. Anything this parser is not sure about (help,
a malformed or unknown option, a bad number, a value out of range) returns
None and Typer handles it, with its own messages.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from typing import Any

_HELP = {"-h", "--help"}


class _Fallback(Exception):
    """The command line needs Typer (help, or an error Typer should word)."""


def load_spec() -> dict[str, Any]:
    from .spec import SPEC  # generated Python, not JSON: no json (and re) to import

    return SPEC


def _convert(value: str, param: dict) -> Any:
    type_name = param["type"]
    if type_name == "str":
        return value
    try:
        number: int | float = int(value) if type_name == "int" else float(value)
    except ValueError:
        raise _Fallback from None
    low, high = param.get("min"), param.get("max")
    if (low is not None and number < low) or (high is not None and number > high):
        raise _Fallback  # out of range: Typer words the error
    return number


def _find_option(params: list[dict], token: str) -> tuple[dict, bool]:
    for param in params:
        if param["kind"] != "option":
            continue
        if token in param["opts"]:
            return param, True
        if token in param["secondary_opts"]:
            return param, False
    raise _Fallback


def parse(spec: dict[str, Any], argv: list[str]) -> tuple[str, dict[str, Any]]:
    """(impl "module:function", keyword options) for argv, or _Fallback."""
    commands = spec["commands"]
    if len(argv) >= 2 and f"{argv[0]} {argv[1]}" in commands:
        command, rest = commands[f"{argv[0]} {argv[1]}"], argv[2:]
    elif argv and argv[0] in commands:
        command, rest = commands[argv[0]], argv[1:]
    else:
        raise _Fallback
    if not command.get("impl"):
        raise _Fallback
    params = command["params"]
    values: dict[str, Any] = {}
    positional: list[str] = []
    tokens = iter(rest)
    for token in tokens:
        if token == "--":
            positional.extend(tokens)
            break
        if token in _HELP:
            raise _Fallback
        if token.startswith("--") or (token.startswith("-") and len(token) == 2 and token != "-"):
            name, eq, inline = token.partition("=")
            param, positive = _find_option(params, name)
            if param["flag"]:
                if eq:
                    raise _Fallback
                value: Any = positive
            else:
                raw = inline if eq else next(tokens, None)
                if raw is None:
                    raise _Fallback
                value = _convert(raw, param)
            if param["multiple"]:
                values.setdefault(param["name"], []).append(value)
            else:
                values[param["name"]] = value
        elif token.startswith("-") and token != "-" and not _is_number(token):
            raise _Fallback  # bundled short flags and the like: leave them to click
        else:
            positional.append(token)
    _bind_arguments([p for p in params if p["kind"] == "argument"], positional, values)
    for param in params:
        if param["name"] not in values:
            if param["required"]:
                raise _Fallback
            default = param["default"]
            values[param["name"]] = list(default) if param["multiple"] and default is not None else default
    return command["impl"], values


def _bind_arguments(arguments: list[dict], positional: list[str], values: dict[str, Any]) -> None:
    """Positional words to arguments in order; a variadic last argument
    (nargs -1, exported as "multiple") takes the rest (the exporter refuses
    one anywhere else)."""
    variadic = bool(arguments) and arguments[-1]["multiple"]
    fixed = arguments[:-1] if variadic else arguments
    if not variadic and len(positional) > len(fixed):
        raise _Fallback
    for param, raw in zip(fixed, positional):
        values[param["name"]] = _convert(raw, param)
    rest = positional[len(fixed):]
    if variadic and rest:
        values[arguments[-1]["name"]] = [_convert(raw, arguments[-1]) for raw in rest]


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def dispatch(argv: list[str], ctx) -> int | None:
    """Run argv and return its exit code, or None when Typer must take over."""
    try:
        spec = load_spec()
        impl_path, params = parse(spec, argv)
    except (_Fallback, ImportError, ValueError):
        return None
    module_name, _, func_name = impl_path.partition(":")
    # __import__, not importlib.import_module: the importlib package (and warnings) cost a light command
    command = getattr(__import__(module_name, fromlist=[func_name]), func_name)
    from .run import run

    return run(command, ctx, params)
