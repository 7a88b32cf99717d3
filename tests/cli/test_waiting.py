"""While a command waits for the model or the daemon, a person at a
terminal sees a status line on stderr; pipes and --json never do. Checked
on a real pseudo-terminal with the real model's cold load (seconds long)."""

from __future__ import annotations

import io
import os

import pytest

from thatch_cli.cli.waiting import Spinner, wanted

from helpers import stop_all, thatch_stderr_pty

QUERY = ["recall", "upload", "the", "wheel", "with", "twine"]


@pytest.fixture
def remembered(tmp_path, minilm_path, isolated_env):
    """A store holding the README's note (saved without a vector: found by
    its words, while the query still needs the model)."""
    from pathlib import Path

    from thatch_cli.memory.records import Memory
    from thatch_cli.storage.memories import MemoryDB

    db = MemoryDB.open(Path(isolated_env["THATCH_DB"]))
    now = "2026-11-30T12:00:00.000Z"
    db.save(Memory(store="s", slug="release-process", label="Release process",
                   content="# Release process\n\nTag the commit, build the wheel and upload it to PyPI with twine.",
                   created_at=now, updated_at=now), overwrite=False, archived=None)
    db.close()
    return {**os.environ, "THATCH_MODEL": minilm_path, "THATCH_STORE": "s", "TERM": "xterm"}


@pytest.mark.model
def test_a_cold_recall_shows_what_it_waits_for_then_erases_it(remembered, tmp_path):
    code, out, screen = thatch_stderr_pty(QUERY, env=remembered, cwd=tmp_path)
    assert code == 0 and "Release process" in out
    assert "thatch: loading the embedding model in this process…" in screen
    after_last_frame = screen.rsplit("s\x1b[K", 1)[1]
    assert after_last_frame.startswith("\r\x1b[K")  # erased before anything else is written
    assert "no vector" in after_last_frame  # the notice comes after, on a clean line
    assert "loading" not in out  # never on stdout


@pytest.mark.model
def test_waiting_for_the_daemon_shows_too(remembered, tmp_path):
    env = {**remembered, "THATCH_DAEMON": "1"}
    try:
        code, out, screen = thatch_stderr_pty([*QUERY, "--json"], env=env, cwd=tmp_path)
        assert code == 0 and "Release process" in out
        assert "loading" not in screen and "waiting" not in screen  # --json: never
        stop_all(env)
        code, out, screen = thatch_stderr_pty(QUERY, env=env, cwd=tmp_path)
        assert code == 0 and "Release process" in out
        assert "thatch: waiting for the model daemon (the first use loads it, once)…" in screen
    finally:
        stop_all(env)


def test_only_a_terminal_gets_a_status_line():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    assert wanted(Terminal(), {"TERM": "xterm"}, json_mode=False)
    assert wanted(Terminal(), {"NO_COLOR": "1"}, json_mode=False)  # no colour, still a status line
    assert not wanted(Terminal(), {"TERM": "dumb"}, json_mode=False)
    assert not wanted(Terminal(), {}, json_mode=True)
    assert not wanted(io.StringIO(), {}, json_mode=False)


def test_a_pipe_never_gets_a_status_line(cli):
    import time

    class Slow:
        name, dim = "slow", 8

        def embed_query(self, text):
            time.sleep(0.7)
            import numpy as np

            return np.ones(8, dtype=np.float32) / np.sqrt(8)

        embed_passages = None

    result = cli("recall", "anything", "--store", "global", embedder=Slow())
    # Only the answer's own notice: no status line, no carriage return.
    assert result.exit_code == 0 and result.stderr == "thatch: no memories match well enough in global\n"


def test_a_notice_during_a_wait_gets_its_own_line():
    stream = io.StringIO()
    spinner = Spinner(stream, "waiting")
    spinner._write("\r⠋ thatch: waiting… 1s")
    spinner.aside("thatch: daemon unavailable; embedding in-process\n")
    assert stream.getvalue() == "\r⠋ thatch: waiting… 1s\r\x1b[Kthatch: daemon unavailable; embedding in-process\n"
    spinner.clear()  # nothing drawn since: nothing to erase
    assert stream.getvalue().endswith("in-process\n")


def test_every_wait_line_fits_80_columns_and_the_daemon_one_says_once():
    """A spinner line that wraps is not erased by its carriage return; the daemon's first
    wait (the model loading, 11-24 s) says it happens once."""
    from thatch_cli.ops.engine import DAEMON, IN_PROCESS, MEASURING

    for message in (DAEMON, IN_PROCESS, MEASURING):
        assert len(f"⠋ thatch: {message}… 24s") <= 80, message
    assert "first use" in DAEMON and "once" in DAEMON
