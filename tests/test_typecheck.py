"""The type checker's configuration ([tool.mypy] in pyproject.toml) stays
true: every module its overrides name exists (mypy says nothing about a
name that matches no module, so a renamed or deleted module would leave its
entry behind), and the strictness docs/architecture.md states is the one
configured, with no module whose errors are ignored."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _mypy() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]


def _overrides() -> list[dict]:
    return _mypy().get("overrides", [])


def _names(override: dict) -> list[str]:
    module = override["module"]
    return [module] if isinstance(module, str) else list(module)


def exists(name: str) -> bool:
    """Whether a module name (or a `package.*` pattern) names code in the checkout."""
    parts = name.removesuffix(".*").split(".")
    path = ROOT.joinpath(*parts)
    if name.endswith(".*"):
        return (path / "__init__.py").is_file()
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_the_existence_check_tells_modules_from_missing_names():
    assert exists("thatch_cli.cli.app") and exists("thatch_cli.support.*") and exists("thatch_cli.support")
    assert not exists("thatch_cli.cli.nonexistent") and not exists("thatch_cli.cli.app.*")


@pytest.mark.parametrize("override", range(len(_overrides())))
def test_every_module_an_override_names_exists(override):
    missing = [name for name in _names(_overrides()[override]) if not exists(name)]
    assert not missing, f"pyproject.toml's mypy override names modules that do not exist: {missing}"


def test_no_module_has_its_errors_ignored():
    ignored = [name for o in _overrides() if o.get("ignore_errors") for name in _names(o)]
    assert not ignored, f"mypy's errors are ignored in {ignored}: fix them instead"


def test_the_stated_strictness_is_the_configured_one():
    assert _mypy().get("check_untyped_defs") is True
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    assert "check_untyped_defs" in architecture
    strict = [name for o in _overrides() if o.get("disallow_untyped_defs") for name in _names(o)]
    assert strict
    for name in strict:
        folder = name.removeprefix("thatch_cli.").removesuffix(".*")
        assert f"`{folder}/`" in architecture, f"docs/architecture.md does not say {name} is checked strictly"
