"""thatch sync over a real sshd on 127.0.0.1 (its own host key, a high
port, the client pointed at it with `ssh -F`: OpenSSH ignores $HOME for its
configuration), and against a server that accepts and never answers: the
sync gives up within its timeout and leaves no ssh behind."""

from __future__ import annotations

import subprocess
import time

import pytest
import sshd

from helpers import git

pytestmark = pytest.mark.skipif(sshd.missing() is not None, reason=sshd.missing() or "")


@pytest.fixture(scope="module")
def ssh(tmp_path_factory):
    """A running sshd (host `thatch-test`) and a host that never answers
    (`thatch-hang`); the value is the GIT_SSH_COMMAND naming them."""
    try:
        with sshd.SshServer(tmp_path_factory.mktemp("ssh")) as server:
            yield server.command
    except RuntimeError as exc:
        pytest.skip(str(exc))


def _over_ssh(clones, host: str, ssh_command: str) -> None:
    for clone in clones:
        clone.env["GIT_SSH_COMMAND"] = ssh_command
        clone.git("remote", "set-url", "origin", f"ssh://{host}{clone.remote}")


def test_sync_over_ssh(team, ssh):
    ann, bob = team(2)
    _over_ssh([ann, bob], sshd.HOST, ssh)
    ann.ok("remember", "Over ssh", "Travels through a real sshd.")
    assert ann.sync()["status"] == "synced"
    assert bob.sync()["pulled"]["created"] == 1
    assert bob.labels() == ["Over ssh"]
    assert git(ann.path, "ls-remote", str(ann.remote), "refs/thatch/memories")


def test_a_server_that_never_answers_is_given_up_on(team, ssh):
    ann, = team(1)
    _over_ssh([ann], sshd.HANG, ssh)
    started = time.monotonic()
    result = ann.run("sync", THATCH_SYNC_TIMEOUT="2")
    took = time.monotonic() - started
    assert result.exit_code == 7, result
    assert "no answer within 2 s" in result.stderr and took < 8
    background = ann.run("sync", "--background", THATCH_SYNC_TIMEOUT="1")
    assert background.exit_code == 0 and "offline" in background.stderr
    time.sleep(0.2)
    lingering = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=False).stdout
    assert sshd.HANG not in lingering  # the timeout killed git's whole process group, ssh included


def test_a_refused_key_is_named_and_not_retried_later(team, ssh):
    ann, = team(1)
    _over_ssh([ann], sshd.HOST, ssh + " -o User=thatch-nobody")  # no such account: the key is refused
    ann.ok("remember", "Over ssh", "Never leaves.")
    result = ann.run("sync")
    assert result.exit_code == 8, result
    line, = result.stderr.splitlines()
    assert "credentials" in line and "Permission denied (publickey" in line and "offline" not in line
    error = ann.run("sync", "--json").json()["error"]
    assert error["code"] == "refused" and "retryable" not in error
    assert ann.labels() == ["Over ssh"]


def test_a_server_that_stops_answering_is_given_up_on_before_the_timeout(team, ssh):
    ann, = team(1)
    _over_ssh([ann], sshd.HANG, ssh)
    started = time.monotonic()
    result = ann.run("sync", THATCH_SYNC_TIMEOUT="60", THATCH_SYNC_STALL="1")
    took = time.monotonic() - started
    assert result.exit_code == 7 and "stopped answering (no progress for 1 s)" in result.stderr, result
    assert took < 10
