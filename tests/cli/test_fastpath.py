"""The fast path parses exactly what Typer parses, into the same values,
and hands everything else to Typer. The cases are generated from the
exported CLI definition (cli/spec.py), so every command and every option
is covered, error cases included; a new option is covered the day it is
added."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Annotated

import pytest
import typer

from thatch_cli.cli import app as app_module
from thatch_cli.cli import fastpath
from thatch_cli.gen import cli_model
from thatch_cli.ops.context import Context

from helpers import typer_params

SPEC = fastpath.load_spec()
SAMPLE = {"str": "some value", "int": "7", "float": "0.5"}


def typer_rejects(argv: list[str], tmp_path) -> list[str]:
    """Run argv through Typer (thatch's error policy); return its stderr lines after asserting exit 2."""
    ctx = Context(env=dict(os.environ), cwd=tmp_path, stdout=io.StringIO(), stderr=io.StringIO())
    code = app_module.main(argv, ctx)
    assert code == 2, (argv, code, ctx.stderr.getvalue())
    assert ctx.stdout.getvalue() == ""
    return ctx.stderr.getvalue().splitlines()


def sample(param: dict) -> str:
    if param.get("choices"):
        return param["choices"][-1]
    if param["type"] == "int" and param.get("min") is not None:
        return str(int(param["min"]))
    return SAMPLE[param["type"]]


def base(path: str, command: dict) -> list[str]:
    argv = path.split()
    for p in command["params"]:
        if p["required"] and p["kind"] == "option":
            argv += [p["opts"][0], sample(p)]
    for p in command["params"]:
        if p["required"] and p["kind"] == "argument":
            argv.append(sample(p))
    return argv


def valid_cases():
    for path, command in sorted(SPEC["commands"].items()):
        if not command.get("impl"):
            continue
        start = base(path, command)
        yield start
        options = [p for p in command["params"] if p["kind"] == "option"]
        for p in options:
            others = list(start)
            if p["flag"]:
                for spelling in p["opts"] + p["secondary_opts"]:
                    yield others + [spelling]
                continue
            value = sample(p)
            for spelling in p["opts"]:
                yield others + [spelling, value]
            yield others + [f"{p['opts'][0]}={value}"]
            if p["multiple"]:
                yield others + [p["opts"][0], value, p["opts"][0], value]
        optional_args = [p for p in command["params"] if p["kind"] == "argument" and not p["required"]]
        if optional_args:
            yield start + [sample(p) for p in optional_args]
        required = [p for p in command["params"] if p["kind"] == "argument" and p["required"]]
        if required:  # after "--", words that look like options are arguments
            options = start[len(path.split()):len(start) - len(required)]
            yield path.split() + options + ["--"] + ["-dash-led"] * len(required)


def error_cases():
    for path, command in sorted(SPEC["commands"].items()):
        if not command.get("impl"):
            continue
        start = base(path, command)
        words = path.split()
        yield start + ["--no-such-option"]
        params = command["params"]
        for p in params:
            if p["required"] and p["kind"] == "argument":
                yield [w for w in start if w != sample(p) or w in words]
            if p["required"] and p["kind"] == "option":
                i = start.index(p["opts"][0])
                yield start[:i] + start[i + 2:]
            if p["kind"] == "option" and not p["flag"]:
                yield start + [p["opts"][0]]  # no value
                if p["type"] in ("int", "float"):
                    yield start + [p["opts"][0], "many"]
                if p.get("min") is not None:
                    yield start + [p["opts"][0], str(int(p["min"]) - 1)]
                if p.get("max") is not None:
                    yield start + [p["opts"][0], str(int(p["max"]) + 1)]
            if p["kind"] == "option" and p["flag"]:
                yield start + [f"{p['opts'][0]}=1"]
        arguments = [p for p in params if p["kind"] == "argument"]
        if not any(p["multiple"] for p in arguments):
            yield start + [sample(p) for p in arguments if not p["required"]] + ["one-too-many"]


VALID = list(dict.fromkeys(tuple(c) for c in valid_cases()))
ERRORS = list(dict.fromkeys(tuple(c) for c in error_cases()))


def test_every_command_and_option_is_covered():
    covered_options = {(c[0], w) for c in VALID for w in c if w.startswith("-")}
    for path, command in SPEC["commands"].items():
        if not command.get("impl"):
            continue
        assert any(" ".join(c).startswith(path) for c in VALID), path
        for p in command["params"]:
            for spelling in p["opts"] + p["secondary_opts"]:
                assert any(spelling in " ".join(c) for c in VALID if " ".join(c).startswith(path)), (path, spelling)
    assert len(VALID) > 100 and len(ERRORS) > 80 and covered_options


@pytest.mark.parametrize("argv", VALID, ids=[" ".join(c) for c in VALID])
def test_fast_parse_matches_typer(argv, monkeypatch):
    assert fastpath.parse(SPEC, list(argv)) == typer_params(list(argv), monkeypatch)


@pytest.mark.parametrize("argv", ERRORS, ids=[" ".join(c) for c in ERRORS])
def test_what_typer_rejects_the_fast_path_leaves_to_typer(argv, tmp_path):
    with pytest.raises(fastpath._Fallback):
        fastpath.parse(SPEC, list(argv))
    lines = typer_rejects(list(argv), tmp_path)
    assert len(lines) == 1 and lines[0].startswith("thatch: error: "), lines


@pytest.mark.parametrize("argv, query", [
    (["recall", "staging", "db", "port"], ["staging", "db", "port"]),
    (["recall", "staging", "--limit", "3", "db", "port", "--json"], ["staging", "db", "port"]),
    (["recall", "--mode", "lexical", "a", "--", "-b", "--json"], ["a", "-b", "--json"]),
    (["recall", "-n", "2", "a", "b", "c"], ["a", "b", "c"]),
])
def test_a_variadic_query_takes_every_word_on_both_paths(argv, query, monkeypatch):
    """recall's query is every positional word, options anywhere, `--` included."""
    parsed = fastpath.parse(SPEC, list(argv))
    assert parsed == typer_params(list(argv), monkeypatch)
    assert parsed[1]["query"] == query


@pytest.mark.parametrize("argv", [[], ["--help"], ["list", "-h"], ["nosuch"], ["recall", "q", "-an", "3"]])
def test_help_and_unknown_commands_go_to_typer(argv):
    with pytest.raises(fastpath._Fallback):
        fastpath.parse(SPEC, argv)


def test_usage_errors_are_one_json_object_with_json(tmp_path):
    ctx = Context(env=dict(os.environ), cwd=tmp_path, stdout=io.StringIO(), stderr=io.StringIO())
    assert app_module.main(["list", "--bogus", "--json"], ctx) == 2
    assert ctx.stdout.getvalue().count("\n") == 1
    error = json.loads(ctx.stdout.getvalue())["error"]
    assert error["code"] == "usage" and error["exit_code"] == 2 and "--bogus" in error["message"]


@pytest.mark.parametrize("fast", ["1", "0"], ids=["fast path", "typer"])
@pytest.mark.parametrize("argv, message", [
    (["recall", "x", "--mode", "fuzzy"], "mode must be one of hybrid, semantic, lexical, got 'fuzzy'"),
    (["dedup", "mark", "a", "b", "--status", "bogus"], "unknown status 'bogus'; use one of duplicate,"),
], ids=["recall --mode", "dedup mark --status"])
def test_a_value_outside_the_choices_is_one_line_and_exit_2(argv, message, fast, make_ctx):
    """The library's check answers on both paths, with the same words."""
    from helpers import run_main

    fastpath.parse(SPEC, argv)  # the fast path handles it, rather than handing it to Typer
    result = run_main(argv, make_ctx(THATCH_FASTPATH=fast))
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("thatch: error: ") and message in lines[0], result.stderr


# -- the exporter refuses what the fast path cannot mirror -------------------------------------------


def _app_with(**option: object) -> typer.Typer:

    app = typer.Typer()

    @app.command()
    def probe(value: str = typer.Option("x", "--value", **option)) -> None:
        """A command."""

    @app.command()
    def other() -> None:
        """Another, so the app is a group."""

    return app


@pytest.mark.parametrize("feature", [
    {"envvar": "THATCH_PROBE"},
    {"callback": lambda value: value},
    {"prompt": True},
    {"is_eager": True},
], ids=["envvar", "callback", "prompt", "eager"])
def test_the_exporter_fails_loudly_on_an_unmirrored_feature(feature):
    with pytest.raises(cli_model.Unmirrored, match="not mirrored by the fast path"):
        cli_model.commands(_app_with(**feature))


def test_the_exporter_refuses_an_unmirrored_type():
    from pathlib import Path

    app = typer.Typer()

    @app.command()
    def probe(where: Annotated[Path, typer.Option("--where")] = Path(".")) -> None:
        """A command."""

    @app.command()
    def other() -> None:
        """Another."""

    with pytest.raises(cli_model.Unmirrored):
        cli_model.commands(app)


def test_ranges_are_exported_and_enforced(monkeypatch):

    app = typer.Typer()

    @app.command()
    def probe(n: Annotated[int, typer.Option("--n", min=1, max=5)] = 1) -> None:
        """A command."""

    @app.command()
    def other() -> None:
        """Another."""

    spec = {"commands": cli_model.commands(app)}
    (param,) = spec["commands"]["probe"]["params"]
    assert (param["min"], param["max"]) == (1, 5)
    spec["commands"]["probe"]["impl"] = "m:probe"
    assert fastpath.parse(spec, ["probe", "--n", "5"])[1] == {"n": 5}
    with pytest.raises(fastpath._Fallback):
        fastpath.parse(spec, ["probe", "--n", "6"])
