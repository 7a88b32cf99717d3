"""Light commands never load the model stack: checked in real processes."""

import os
import subprocess
import sys

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
