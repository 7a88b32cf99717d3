"""Fixtures the hook tests share; a test file that needs another `env` or
`project` defines its own, which pytest prefers to these."""

from __future__ import annotations

import os

import pytest

from helpers import git, stop_all


@pytest.fixture
def env(isolated_env):
    """The fake embedder with the daemon on; every daemon started is stopped after the test."""
    values = {**os.environ, "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "1"}
    yield values
    stop_all(values)


@pytest.fixture
def project(git_repo):
    """acme/widget with one committed source file, for anchors."""
    path = git_repo("widget", remote="git@github.com:acme/widget.git")
    (path / "src").mkdir()
    (path / "src" / "db.ts").write_text("export const POOL_SIZE = 20;\nexport const TIMEOUT = 5;\n")
    git(path, "add", "src")
    git(path, "commit", "-qm", "db")
    return path
