"""`thatch setup HOST --uninstall` where nothing of thatch's is left says so, not "Removed"."""

from __future__ import annotations

import os
import subprocess


def _setup(cwd, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["thatch", "setup", "claude", *flags], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0"})


def test_a_second_uninstall_says_nothing_was_set_up(git_repo, isolated_env):
    project = git_repo("widget", remote="git@github.com:acme/widget.git")
    assert _setup(project).returncode == 0
    first = _setup(project, "--uninstall")
    assert first.returncode == 0 and first.stdout.startswith("Removed thatch from claude"), first.stdout
    second = _setup(project, "--uninstall")
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("Nothing to remove: thatch is not set up in claude (project: "), second.stdout
    assert "Removed" not in second.stdout
