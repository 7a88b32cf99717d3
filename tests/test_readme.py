"""The README's two opening commands are real: CI runs the second verbatim."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_ci_lints_after_the_tests():
    """ruff, mypy and vulture run in CI, configured in pyproject.toml, each
    pinned or bounded in the lint extra."""
    import tomllib

    ci = (ROOT / ".ci" / "run").read_text()
    assert "ruff check thatch_cli tests bench && mypy && vulture" in ci
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["tool"]["mypy"]["files"] == ["thatch_cli"]
    assert {spec.split("=")[0].split(">")[0] for spec in pyproject["project"]["optional-dependencies"]["lint"]} == {
        "ruff", "vulture", "mypy"}


def test_versions_agree():
    import tomllib

    from thatch_cli import __version__

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["version"] == __version__


def _readme_python() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Using thatch from Python", 1)[1]
    return re.search(r"```python\n(.+?)\n```", section, flags=re.S).group(1)


@pytest.mark.model
def test_readme_python_example_runs(isolated_env, minilm_path):
    """The library example, verbatim, in a fresh process: it saves, finds the
    note by meaning (no shared word), and forgets it."""
    home = Path(isolated_env["HOME"])
    (home / "src" / "widget").mkdir(parents=True)
    env = {**os.environ, "THATCH_MODEL": minilm_path, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", _readme_python()], env=env, cwd=home,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "created"
    score, store, label = lines[1].split(" ", 2)
    assert (store, label) == ("widget", "Release process") and 0.3 <= float(score) <= 1
    assert "release-process" not in _slugs(home / "notes.db")


def _slugs(db: Path) -> set[str]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("SELECT slug FROM entries")}


def test_both_commands_take_torch_from_the_cpu_index_first_and_show_progress():
    """PyPI's torch is the CUDA build on Linux x86_64 (about 5 GB): both commands install the CPU
    build from PyTorch's own index alone (no dependencies from there), before anything that needs
    torch, and never silence pip (an install of minutes must show it is alive). The first command
    installs into a virtualenv of its own, so an externally managed Python (PEP 668) is no obstacle."""
    cpu = "install --no-deps --index-url https://download.pytorch.org/whl/cpu torch==2.13.0"
    for command in _readme_commands():
        assert cpu in command
        assert command.index(cpu) < command.index("install '.[") if "install '.[" in command else \
            command.index(cpu) < command.index("install -e '.[")
        assert " -q" not in command.replace("pytest -q", "")
    install_and_run = _readme_commands()[0]
    assert install_and_run.startswith('T=~/.local/share/thatch/venv && python3 -m venv "$T"')
    assert "--user" not in install_and_run and "--break-system-packages" not in install_and_run


def test_readme_says_where_the_commands_run():
    """Both opening commands install '.' : the README says to clone and cd first."""
    head = (ROOT / "README.md").read_text().split("```sh", 1)[0]
    assert "git clone" in head and "`cd thatch`" in head


def test_readme_has_upgrade_and_uninstall():
    text = (ROOT / "README.md").read_text()
    upgrade = text.split("\n## Upgrade\n", 1)[1].split("\n## ", 1)[0]
    uninstall = text.split("\n## Uninstall\n", 1)[1].split("\n## ", 1)[0]
    assert "pip install '.[minilm]'" in upgrade
    for removes_first in ("setup claude --uninstall", "hooks uninstall", "sync off", "daemon stop"):
        assert removes_first in uninstall
    for left_behind in ("thatch.db", "config.toml", "~/.cache/thatch/", "~/.local/state/thatch/"):
        assert left_behind in uninstall
