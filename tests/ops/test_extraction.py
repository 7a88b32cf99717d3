"""The extraction queue: private files named safely per session, trimmed
and capped entries, taken/drained bookkeeping, and concurrent appends."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest

from thatch_cli.ops import extraction
from thatch_cli.ops.extraction import Queue, file_name, interaction, own_tool


@pytest.fixture
def env(isolated_env):
    return dict(os.environ)


def add(queue: Queue, *commands: str) -> int:
    return queue.append([interaction("Bash", {"command": c}, f"ran {c}") for c in commands])


def test_session_ids_become_safe_distinct_file_names():
    assert file_name("0f8c2a44-9b1e-4c1f-bb2e-7d3f6a9e1c55") == "0f8c2a44-9b1e-4c1f-bb2e-7d3f6a9e1c55"
    traversal = file_name("../../etc/passwd")
    assert "/" not in traversal and ".." not in traversal and traversal.startswith("______etc_passwd-")
    assert file_name("a/b") != file_name("a_b") and file_name("a/b") != file_name("a:b")
    assert file_name("") is None and file_name("   ") is None
    assert len(file_name("x" * 1000)) <= 100


def test_files_are_private(env):
    queue = Queue(env, "s/1")
    add(queue, "ls")
    assert stat.S_IMODE(os.stat(queue.dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(queue.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(queue.lock_path).st_mode) == 0o600
    assert queue.path.parent == queue.dir and queue.path.name.startswith("s_1-")


def test_entries_are_trimmed_and_titled():
    item = interaction("Read", {"file_path": "/src/app.py"}, "x" * 10_000)
    assert item["title"] == "Read: /src/app.py" and item["input"] == '{"file_path": "/src/app.py"}'
    assert item["output"].startswith("x" * 2_000) and item["output"].endswith("[8000 more characters]")
    assert interaction("Weird", ["not", "a", "dict"], None)["title"] == "Weird"


def test_the_queue_is_capped_oldest_first(env, monkeypatch):
    queue = Queue(env, "cap")
    monkeypatch.setattr(extraction, "MAX_ENTRIES", 5)
    add(queue, *[f"step {i}" for i in range(8)])
    state = queue.read()
    assert [e["title"] for e in state["entries"]] == [f"Bash: step {i}" for i in range(3, 8)]
    assert state["dropped"] == 3
    monkeypatch.setattr(extraction, "MAX_ENTRIES", 50)
    monkeypatch.setattr(extraction, "MAX_BYTES", 3_000)
    queue.append([interaction("Read", {"file_path": f"f{i}"}, "y" * 1_000) for i in range(5)])
    assert len(queue.read()["entries"]) == 2  # the newest that fit


def test_take_marks_taken_and_drain_drops(env):
    queue = Queue(env, "flow")
    add(queue, "a", "b", "c")
    assert queue.nudged() == 0 and queue.nudged() == 1
    given, left, last = queue.take(max_chars=400)
    assert [e["title"] for e in given] == ["Bash: a", "Bash: b"] and left == 1 and last == 2
    assert [e["title"] for e in queue.pending()] == ["Bash: c"] and queue.read()["missed"] == 0
    add(queue, "d")
    assert queue.drain(through=last) == 2
    assert [e["title"] for e in queue.pending()] == ["Bash: c", "Bash: d"]
    assert queue.drain() == 2 and queue.pending() == []
    add(queue, "e")  # numbering never starts over: a server may still remember seq 2
    assert [e["seq"] for e in queue.read()["entries"]] == [5]


def test_a_save_drops_what_was_handed_out_and_keeps_what_was_not(env):
    """Mid-extraction (a sub-agent fetching page by page), a save answers the
    page it read; the pages not fetched yet stay. A save with nothing handed
    out answers everything queued (the agent saw those calls itself)."""
    queue = Queue(env, "pages")
    add(queue, "a", "b", "c")
    queue.take(max_chars=200)
    queue.append([], drain_first=True)
    assert [e["title"] for e in queue.pending()] == ["Bash: b", "Bash: c"] and len(queue.read()["entries"]) == 2
    queue.append([], drain_first=True)
    assert queue.read()["entries"] == []


def test_drain_through_keeps_what_was_never_handed_out(env):
    queue = Queue(env, "release")
    add(queue, "a", "b", "c")
    given, _, last = queue.take(max_chars=10_000)
    queue.release({given[-1]["seq"]})  # left out of a capped reply
    assert queue.drain(through=last) == 2 and [e["title"] for e in queue.pending()] == ["Bash: c"]


def test_thatch_tools_are_recognised_by_every_host_naming():
    assert own_tool("mcp__thatch__memory_remember") == (True, True)
    assert own_tool("MCP:memory_remember") == (True, True)
    assert own_tool("extraction_done") == (True, True)
    assert own_tool("mcp__thatch__memory_recall") == (True, False)
    assert own_tool("mcp__other__memory_recall") == (False, False)
    assert own_tool("Bash") == (False, False)


def test_stale_queues_are_forgotten(env):
    old = Queue(env, "old")
    add(old, "a")
    week_ago = time.time() - 8 * 86400
    for path in (old.path, old.lock_path):
        os.utime(path, (week_ago, week_ago))
    add(Queue(env, "new"), "b")
    assert not old.path.exists() and not old.lock_path.exists()


APPENDER = """
import sys
from thatch_cli.ops.extraction import Queue, interaction
queue = Queue({"HOME": sys.argv[1], "XDG_STATE_HOME": sys.argv[2]}, "race")
for i in range(15):
    queue.append([interaction("Bash", {"command": f"{sys.argv[3]}-{i}"}, "ok")])
"""


def test_concurrent_appends_lose_nothing(env):
    processes = [subprocess.Popen([sys.executable, "-c", APPENDER, env["HOME"], env["XDG_STATE_HOME"], str(w)])
                 for w in range(3)]
    assert all(p.wait(timeout=60) == 0 for p in processes)
    entries = Queue(env, "race").read()["entries"]
    assert {e["title"] for e in entries} == {f"Bash: {w}-{i}" for w in range(3) for i in range(15)}
    assert len({e["seq"] for e in entries}) == 45
