"""Light commands never load the model stack: checked in real processes."""

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("torch", "sentence_transformers", "numpy", "transformers")

PROBE = """
import runpy, sys, atexit, json, os
def report():
    heavy = sorted(m for m in {heavy!r} if m in sys.modules)
    with open(os.environ["PROBE_OUT"], "w") as fh:
        json.dump(heavy, fh)
atexit.register(report)
sys.argv = ["thatch", *{args!r}]
runpy.run_module("thatch_cli", run_name="__main__")
"""


def _loaded(args, env, tmp_path, cwd):
    out = tmp_path / "probe.json"
    code = PROBE.format(heavy=HEAVY, args=list(args))
    result = subprocess.run([sys.executable, "-c", code], env={**env, "PROBE_OUT": str(out)}, cwd=cwd,
                            capture_output=True, text=True, timeout=60)
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(out.read_text()), result


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
    """The probe itself works: recall with the fake model does load numpy."""
    heavy, result = _loaded(["recall", "build"], populated, tmp_path, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "numpy" in heavy


def test_python_dash_m_and_console_script(populated, tmp_path):
    result = subprocess.run([sys.executable, "-m", "thatch_cli", "list"], env=populated, capture_output=True,
                            text=True, cwd=tmp_path)
    assert result.returncode == 0 and "Build steps" in result.stdout
