"""bench/ scripts run with bench/ first on sys.path: a script named like a
standard-library module or a dependency (secrets, mcp, ...) would be imported
in its place by everything else (numpy imports `secrets`), as happened once."""

from __future__ import annotations

import sys
from importlib.util import find_spec
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_no_bench_script_shadows_a_module_the_code_may_import():
    shadowing = []
    for script in BENCH.glob("*.py"):
        name = script.stem
        if name in sys.stdlib_module_names or _installed(name):
            shadowing.append(script.name)
    assert shadowing == []


def _installed(name: str) -> bool:
    """Whether `name` is a module of an installed distribution (the test
    folders on sys.path do not count)."""
    spec = find_spec(name)
    return spec is not None and spec.origin is not None and "site-packages" in Path(spec.origin).parts
