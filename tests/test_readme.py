"""The README's two opening commands are real: CI runs the second verbatim."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    head = text.split("---", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", head, flags=re.S)


def test_readme_opens_with_two_commands():
    commands = _readme_commands()
    assert len(commands) == 2
    install_and_run, install_and_test = commands
    assert "thatch remember" in install_and_run and "thatch recall" in install_and_run
    assert "pytest" in install_and_test


def test_ci_runs_the_readme_test_command():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in ci_lines


def test_versions_agree():
    import tomllib

    from thatch_cli import __version__

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == __version__
