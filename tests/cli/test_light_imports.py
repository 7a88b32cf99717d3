"""Light commands never load the model stack: checked in real processes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import run_probed

HEAVY = ("torch", "sentence_transformers", "numpy", "transformers")


def _loaded(args, env, tmp_path, cwd):
    """The HEAVY modules `thatch ARGS` imported, through the shared probe, and the finished process."""
    result, modules = run_probed(args, env=env, cwd=cwd, tmp_path=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr
    assert modules, result.stderr  # the probe reported
    return sorted(modules & set(HEAVY)), result


@pytest.fixture
def populated(isolated_env, tmp_path):
    env = {**os.environ, "THATCH_MODEL": "fake:32", "THATCH_STORE": "acme/widget"}
    subprocess.run([sys.executable, "-m", "thatch_cli", "remember", "Build steps", "make release"],
                   env=env, check=True, capture_output=True, cwd=tmp_path)
    subprocess.run([sys.executable, "-m", "thatch_cli", "remember", "Other", "gone soon"],
                   env=env, check=True, capture_output=True, cwd=tmp_path)
    return env


@pytest.mark.parametrize("fastpath", ["1", "0"])
@pytest.mark.parametrize(
    "args",
    [["list"], ["list", "--json"], ["show", "build steps"], ["stores"], ["stores", "--json"], ["forget", "other"],
     ["show", "missing"]],
)
def test_light_commands_do_not_import_the_model_stack(populated, tmp_path, args, fastpath):
    heavy, result = _loaded(args, {**populated, "THATCH_FASTPATH": fastpath}, tmp_path, tmp_path)
    assert heavy == [], f"{args} imported {heavy}"
    assert result.returncode in (0, 3)


def test_probe_detects_heavy_imports(populated, tmp_path):
    """The shared probe (conftest.run_probed) itself works: recall with the fake model does load numpy."""
    heavy, result = _loaded(["recall", "build"], populated, tmp_path, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "numpy" in heavy


def test_python_dash_m_and_console_script(populated, tmp_path):
    result = subprocess.run([sys.executable, "-m", "thatch_cli", "list"], env=populated, capture_output=True,
                            text=True, cwd=tmp_path)
    assert result.returncode == 0 and "Build steps" in result.stdout


# -- the exact modules a light command imports -------------------------------------------

REPO = Path(__file__).resolve().parents[2]
# Run under `python -S` (no site: nothing imported before thatch but the interpreter's own
# start-up), with the checkout on sys.path; print the modules thatch's run added, one per line.
_EXACT_PROBE = """
import os, sys
sys.path.insert(0, os.environ.pop("THATCH_PROBE_REPO"))
before = set(sys.modules)
from thatch_cli.__main__ import run
code = run(sys.argv[1:])
sys.stdout.flush()
os.write(2, ("\\nMODULES " + " ".join(sorted(set(sys.modules) - before)) + "\\n").encode())
sys.exit(code)
"""
# What thatch's own light path may use besides sqlite3 (and what sqlite3 brings along,
# measured in the same interpreter): `from __future__` compiles to an import of __future__,
# the database class uses contextlib, slugs use unicodedata.
LIGHT_STDLIB = {"__future__", "contextlib", "unicodedata"}
# thatch's modules on the light path: the entry point, the fast path and its spec, the
# list/show/stores command module, the operations they call, the storage they read and
# the location resolver (gitfs and identity only when the store is detected, not given).
LIGHT_THATCH = {
    "thatch_cli", "thatch_cli.__main__", "thatch_cli.cli", "thatch_cli.cli.declare", "thatch_cli.cli.fastpath",
    "thatch_cli.cli.memories", "thatch_cli.cli.output", "thatch_cli.cli.render", "thatch_cli.cli.run",
    "thatch_cli.cli.spec", "thatch_cli.cli.waiting", "thatch_cli.location", "thatch_cli.location.scope",
    "thatch_cli.ops", "thatch_cli.ops.context", "thatch_cli.ops.memories", "thatch_cli.ops.scope",
    "thatch_cli.storage", "thatch_cli.storage.memories", "thatch_cli.storage.schema", "thatch_cli.storage.vectors",
    "thatch_cli.support", "thatch_cli.support.clock", "thatch_cli.support.errors", "thatch_cli.support.paths",
    "thatch_cli.support.settings", "thatch_cli.support.slugs", "thatch_cli.support.textsafe",
    "thatch_cli.support.validate",
    # a memory's fields, read by name (memory/fields.py), and its records; the shared reads; opening and
    # checking the file; reading past undecodable rows; the sync marks every memory carries.
    "thatch_cli.memory", "thatch_cli.memory.fields", "thatch_cli.memory.records", "thatch_cli.storage.fastread",
    "thatch_cli.storage.opening", "thatch_cli.storage.readable", "thatch_cli.storage.sync",
    # the one filter a listing is (memory/filter.py), the values it is given, and its SQL.
    "thatch_cli.memory.filter", "thatch_cli.memory.values", "thatch_cli.storage.filters",
}
DETECTING = {"thatch_cli.location.gitfs", "thatch_cli.location.identity"}
# show also reads the memory's anchors (the drift check itself only runs when it has some).
ANCHORS = {"thatch_cli.ops.anchors", "thatch_cli.storage.anchors"}


def _sqlite3_modules() -> set[str]:
    code = "import os, sys; before = set(sys.modules); import sqlite3; print(' '.join(set(sys.modules) - before))"
    return set(subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                              check=True).stdout.split())


def _imported(args, env, cwd) -> tuple[set[str], subprocess.CompletedProcess]:
    result = subprocess.run([sys.executable, "-S", "-c", _EXACT_PROBE, *args], cwd=cwd, capture_output=True,
                            text=True, env={**env, "THATCH_PROBE_REPO": str(REPO)})
    assert result.returncode == 0, result.stderr
    line = [text for text in result.stderr.splitlines() if text.startswith("MODULES ")]
    assert line, result.stderr
    return set(line[-1].split()[1:]), result


@pytest.fixture
def repository(populated, tmp_path):
    """A git repository whose origin names the populated store; one ordinary run fills the
    identity cache, as the shell hook or any earlier command in it would have."""
    from helpers import git

    repo = tmp_path / "widget"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "git@github.com:acme/widget.git")
    env = {k: v for k, v in populated.items() if k != "THATCH_STORE"}
    subprocess.run([sys.executable, "-m", "thatch_cli", "list"], env=env, cwd=repo, check=True,
                   capture_output=True)
    return repo, env


@pytest.mark.parametrize("args", [["list", "acme/widget"], ["list"], ["show", "build steps", "acme/widget"],
                                  ["show", "build steps"], ["stores"], ["list", "--store", "acme/widget"]])
def test_a_light_command_imports_exactly_what_it_uses(populated, repository, args):
    """list, show and stores import sqlite3 (and what it brings), three small stdlib modules
    and thatch's own light path: no dataclasses, typing, enum, re, json, pathlib, urllib,
    tempfile, rich or Typer, detected store or not."""
    repo, env = repository
    modules, result = _imported(args, env, repo)
    assert "Build steps" in result.stdout or args == ["stores"] and "acme/widget" in result.stdout
    thatch = {m for m in modules if m.split(".")[0] == "thatch_cli"}
    assert modules - thatch == _sqlite3_modules() | LIGHT_STDLIB
    given = "acme/widget" in args
    assert thatch == LIGHT_THATCH | (set() if given or args == ["stores"] else DETECTING) | (
        ANCHORS if args[0] == "show" else set())
