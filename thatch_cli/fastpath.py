"""Run a command without importing Typer (~40 ms) and pydantic (~50 ms).

Arguments are parsed against cli_spec.json, which `python -m thatch_cli.gen`
exports from the Typer definitions in cli.py, so both paths accept the same
command line. Anything this parser is not sure about (help, a malformed or
unknown option, a bad number) returns None and Typer handles it, with its
own messages.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

SPEC_PATH = Path(__file__).resolve().parent / "cli_spec.json"
_HELP = {"-h", "--help"}


class _Fallback(Exception):
    """The command line needs Typer (help, or an error Typer should word)."""


def load_spec(path: Path = SPEC_PATH) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _convert(value: str, type_name: str) -> Any:
    try:
        if type_name == "int":
            return int(value)
        if type_name == "float":
            return float(value)
    except ValueError:
        raise _Fallback from None
    return value


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
                value = _convert(raw, param["type"])
            if param["multiple"]:
                values.setdefault(param["name"], []).append(value)
            else:
                values[param["name"]] = value
        elif token.startswith("-") and token != "-" and not _is_number(token):
            raise _Fallback  # bundled short flags and the like: leave them to click
        else:
            positional.append(token)
    arguments = [p for p in params if p["kind"] == "argument"]
    if len(positional) > len(arguments):
        raise _Fallback
    for param, raw in zip(arguments, positional):
        values[param["name"]] = _convert(raw, param["type"])
    for param in params:
        if param["name"] not in values:
            if param["required"]:
                raise _Fallback
            values[param["name"]] = list(param["default"] or []) if param["multiple"] else param["default"]
    return command["impl"], values


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def dispatch(argv: list[str]) -> int | None:
    """Run argv and return its exit code, or None when Typer must take over."""
    try:
        spec = load_spec()
        impl_path, params = parse(spec, argv)
    except (_Fallback, OSError, ValueError):
        return None
    module_name, _, func_name = impl_path.partition(":")
    impl = getattr(importlib.import_module(module_name), func_name)
    from .context import Context
    from .runner import run

    return run(impl, Context.from_process(), params)
