"""A failed sync says what failed, with its documented exit code and what to
do: a server that declines the push (pull-only at once, no retry loop), a
full disk under .git (not "cannot reach"). Authentication and a silent
server over a real sshd are in test_ssh.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest

from helpers import git


def test_a_push_declined_by_a_server_hook_is_pull_only_without_retrying(team):
    ann, bob = team(2)
    ann.ok("remember", "Shared", "Read me.")
    ann.sync()
    hook = ann.remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'memories are frozen this week' >&2\nexit 1\n")
    hook.chmod(0o755)
    bob.ok("remember", "Mine", "Local.")
    started = time.monotonic()
    result = bob.run("sync", "--json")
    took = time.monotonic() - started
    report = result.json()
    assert result.exit_code == 0 and report["status"] == "pull-only" and report["rounds"] == 1, report
    assert "declined" in report["notices"][0] and took < 5
    assert bob.labels() == ["Mine", "Shared"]
    plain = bob.run("sync")
    assert [line for line in plain.stderr.splitlines() if "pull-only" in line]


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                           capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="needs unshare with user and mount namespaces (a small tmpfs)")
def test_a_full_disk_under_git_is_named_as_such(team, tmp_path):
    ann, bob = team(2)
    for n in range(40):
        bob.ok("remember", f"Note {n}", f"Text {n} " + "x" * 2000)
    bob.sync()
    small = tmp_path / "small"
    small.mkdir()
    # A 512 KiB disk holding the clone, filled up before the sync fetches bob's memories.
    script = ("mount -t tmpfs -o size=512k tmpfs \"$1\" && git clone -q \"$2\" \"$1/repo\" && cd \"$1/repo\""
              " && thatch sync init --yes >/dev/null 2>&1 || exit 99; dd if=/dev/zero of=\"$1/fill\" bs=4k"
              " 2>/dev/null; thatch sync --json; echo \"exit=$?\" >&2")
    env = {**ann.env, "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0"}
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", str(small), str(ann.remote)],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "exit=6" in done.stderr, done
    error = json.loads(done.stdout.splitlines()[-1])["error"]
    assert error["code"] == "disk_full" and "no space left" in error["message"].lower(), error
    assert "cannot reach" not in error["message"]
    assert git(bob.path, "ls-remote", "origin", "refs/thatch/memories")
