"""What keeps the daemon's resident memory down (daemon/memory.py): fewer malloc arenas in its
environment, free heap pages returned after each request, set-up code of shared libraries paged
out once the model is built. The figure itself is measured by bench/daemon_memory.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from thatch_cli.daemon import memory

from helpers import daemon_pids, stop_all


def _rss_file_kb() -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("RssFile"))


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs Linux /proc")
def test_paging_out_libraries_drops_their_resident_pages():
    import numpy  # noqa: F401  (shared libraries with resident pages)

    before = _rss_file_kb()
    assert memory.page_out_libraries() > 0
    assert _rss_file_kb() < before


def test_trim_is_safe_to_call_anywhere():
    memory.trim()
    memory.trim()


@pytest.fixture
def daemon_env(isolated_env):
    env = {**os.environ, "THATCH_DAEMON": "1", "THATCH_MODEL": "fake:32", "THATCH_STORE": "acme/widget"}
    env.pop("MALLOC_ARENA_MAX", None)
    yield env
    stop_all(env)


def _environ(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as fh:
        pairs = [item.split(b"=", 1) for item in fh.read().split(b"\0") if b"=" in item]
    return {k.decode(): v.decode() for k, v in pairs}


@pytest.mark.parametrize("given", [None, "4"])
def test_the_daemon_starts_with_few_malloc_arenas_unless_told_otherwise(daemon_env, given):
    env = daemon_env if given is None else {**daemon_env, "MALLOC_ARENA_MAX": given}
    subprocess.run([sys.executable, "-m", "thatch_cli", "daemon", "start"], env=env, check=True,
                   capture_output=True, timeout=120)
    [pid] = daemon_pids(env)
    assert _environ(pid)["MALLOC_ARENA_MAX"] == (given or "2")
