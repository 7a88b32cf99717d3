"""Generated files match the CLI definitions: regenerate with
`python -m thatch_cli.gen` when one of these fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from thatch_cli.cli.fastpath import load_spec
from thatch_cli.gen import __main__ as gen_main
from thatch_cli.gen import cli_model, completions, man, secret_rules, spec, tree

ROOT = Path(__file__).resolve().parents[2]


def expected(with_tree: bool = True) -> dict[Path, str]:
    """Every generated file with the text its generator would write now
    (the tree of docs/architecture.md comes from docstrings, and the
    credential rules from their TOML files, not the CLI)."""
    files = {spec.SPEC_PATH: spec.render(), man.MAN_PATH: man.render()}
    files.update(completions.outputs())
    if with_tree:
        files.update(tree.outputs())
        files[secret_rules.RULES_PATH] = secret_rules.render()
    return files


def stale(files: dict[Path, str]) -> list[str]:
    return [str(path.relative_to(ROOT)) for path, text in files.items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text]


def test_every_generator_is_registered():
    """A module of thatch_cli/gen that writes files but is not registered would never run."""
    import importlib

    writers = {path.stem for path in Path(gen_main.__file__).parent.glob("*.py")
               if callable(getattr(importlib.import_module(f"thatch_cli.gen.{path.stem}"), "write", None))}
    assert writers == set(gen_main.GENERATORS)


def test_generated_files_are_up_to_date():
    files = expected()
    assert {str(p.relative_to(ROOT)) for p in files} >= {
        "thatch_cli/cli/spec.py", "man/thatch.1", "completions/thatch.bash", "completions/_thatch",
        "completions/thatch.fish", "docs/architecture.md", "thatch_cli/support/credential_rules.py"}
    assert stale(files) == [], "stale generated files; run: python -m thatch_cli.gen"


def test_installed_scripts_are_the_repository_scripts():
    """An installed thatch renders from cli/spec.py; that gives the same text."""
    from thatch_cli.integrations import completion as completion_install

    for shell, name in completions.FILES.items():
        assert completion_install.script(shell, load_spec()) == (completions.REPO_DIR / name).read_text()


def test_a_changed_cli_makes_the_files_stale(monkeypatch):
    """The check above can fail: a new option shows up in every generated file."""
    real = cli_model.commands()
    changed = {**real, "stores": {**real["stores"], "params": [*real["stores"]["params"], {
        "name": "brand_new", "kind": "option", "opts": ["--brand-new"], "secondary_opts": [], "flag": True,
        "type": "bool", "required": False, "default": False, "multiple": False, "hidden": False,
        "metavar": None, "help": "A brand new option."}]}}
    monkeypatch.setattr(cli_model, "commands", lambda: changed)
    files = expected(with_tree=False)
    assert sorted(stale(files)) == sorted(str(p.relative_to(ROOT)) for p in files)
    for text in files.values():
        assert "brand-new" in text or "brand\\-new" in text


def test_a_changed_docstring_makes_the_tree_stale(monkeypatch):
    monkeypatch.setattr(tree, "summary", lambda path: "something else")
    assert stale(tree.outputs()) == ["docs/architecture.md"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_hidden_and_internal_commands_are_left_out(monkeypatch, shell):
    real = cli_model.commands()
    extra = {"_secret": {**real["stores"], "hidden": False}, "ghost": {**real["stores"], "hidden": True}}
    monkeypatch.setattr(cli_model, "commands", lambda: {**real, **extra})
    text = completions.render_all(completions.definitions())[shell]
    assert "_secret" not in text and "ghost" not in text
    assert "ghost" not in man.render() and "_secret" not in man.render()


def test_fixed_choices_are_exported_from_the_library_constants():
    """cli.one_of declares them once, from the constants the library checks against."""
    from thatch_cli.cli.spec import SPEC as data
    from thatch_cli.integrations import hosts
    from thatch_cli.integrations import shell as shellinit
    from thatch_cli.storage.rules import KIND_NAMES
    from thatch_cli.support import validate
    from thatch_cli.sync import setup as sync_setup

    choices = {(path, p["name"]): p["choices"] for path, command in data["commands"].items()
               for p in command["params"] if p["choices"]}
    assert choices == {
        ("recall", "mode"): list(validate.MODES),
        ("rules list", "kind"): list(KIND_NAMES),
        ("search", "mode"): list(validate.MODES),
        ("dedup mark", "status"): list(validate.VERDICTS),
        ("completion install", "shell"): list(shellinit.SHELLS),
        ("completion show", "shell"): list(shellinit.SHELLS),
        ("init", "shell"): list(shellinit.SHELLS),
        ("setup", "host"): list(hosts.HOSTS),
        ("sync", "action"): list(sync_setup.ACTIONS),
    }
    recall_params = {p["name"]: p for p in data["commands"]["recall"]["params"]}
    assert recall_params["mode"]["type"] == "str" and recall_params["mode"]["default"] == "hybrid"


def test_a_choice_that_needs_quoting_is_refused(monkeypatch):
    real = cli_model.commands()
    params = [{**p, "choices": ["ok", "two words"]} if p["name"] == "mode" else p for p in real["recall"]["params"]]
    monkeypatch.setattr(cli_model, "commands", lambda: {**real, "recall": {**real["recall"], "params": params}})
    with pytest.raises(ValueError, match="two words"):
        completions.render_all(completions.definitions())


def test_every_data_file_of_the_package_is_installed():
    """Files the package reads at run time (templates) must be package data, or a non-editable
    install lacks them (the exported spec, when it was JSON, once was: every command took the
    slow path)."""
    import fnmatch
    import tomllib

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["thatch_cli"]
    package = ROOT / "thatch_cli"
    data = [p.relative_to(package).as_posix() for p in package.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    assert "templates/shell/bash.sh" in data
    assert [f for f in data if not any(fnmatch.fnmatch(f, pattern) for pattern in patterns)] == []
