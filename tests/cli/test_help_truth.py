"""Help and messages that tell the truth: reindex covers every store, setup suggests the host
meant, and a reader closing the pipe early is not an error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def test_reindex_help_says_it_checks_every_store(cli):
    text = " ".join(cli("reindex", "--help").stdout.split())
    assert "Embed the memories of every store (or of --store)" in text
    assert "Only this store (default: every store)." in text


def test_setup_suggests_the_host_meant(cli):
    result = cli("setup", "claud")
    assert result.exit_code == 2
    assert result.stderr == ("thatch: error: unknown host 'claud'; did you mean 'claude'? (the hosts are claude,"
                             " cursor, codex)\n")
    assert cli("setup", "claud", "--json").json()["error"]["suggestions"] == ["claude"]


@pytest.mark.parametrize("command", ["--help", "list --help", "help recall", "list acme/widget", "export --all-stores",
                                     "dedup"])
def test_a_reader_closing_the_pipe_is_not_an_error(cli, isolated_env, command):
    """`thatch --help | head -1` and the like exit 0 (as git and gh do), without a word on stderr:
    here the reader has gone before the first write, so every write meets a closed pipe."""
    for n in range(3):
        cli("remember", f"Note {n}", "x" * 400, "--store", "acme/widget")
    proc = subprocess.Popen([sys.executable, "-m", "thatch_cli", *command.split()], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "THATCH_MODEL": "fake:32"})
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert (proc.wait(timeout=60), stderr) == (0, "")
