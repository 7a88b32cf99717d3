"""Fixtures for the real-host tests: the stand-in model API, a sandbox per
test, and the host programs (skipped with a reason when not installed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sandbox import Sandbox, codex_model, program  # noqa: E402
from standin import StandIn  # noqa: E402

CLAUDE_VERSIONS = ("2.1.48", "2.1.110", "2.1.332")
NEWEST_CLAUDE = CLAUDE_VERSIONS[-1]


@pytest.fixture
def api():
    with StandIn() as server:
        yield server


@pytest.fixture
def sandbox(tmp_path, api) -> Sandbox:
    return Sandbox(tmp_path, api.url)


def claude(version: str) -> list[str]:
    return program(f"claude-code-{version}", "claude")


@pytest.fixture(scope="session")
def codex() -> list[str]:
    return program("codex-0.171.0", "codex")


_MODEL: dict = {}


@pytest.fixture
def codex_sandbox(sandbox, codex) -> Sandbox:
    """A sandbox whose Codex talks to the stand-in (`codex` on PATH too)."""
    from sandbox import on_path

    if not _MODEL:
        _MODEL.update(codex_model(codex, sandbox.env))
    sandbox.codex_config(dict(_MODEL))
    on_path(sandbox.bin, "codex", codex)
    return sandbox
