"""thatch sync over a real sshd on 127.0.0.1 (its own host key, a high
port, the client pointed at it with `ssh -F`: OpenSSH ignores $HOME for its
configuration), and against a server that accepts and never answers: the
sync gives up within its timeout and leaves no ssh behind."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from helpers import git

SSHD = "/usr/sbin/sshd"
pytestmark = pytest.mark.skipif(
    not (os.path.exists(SSHD) and shutil.which("ssh") and shutil.which("ssh-keygen")),
    reason="needs openssh-server and openssh-client (apt-get install openssh-server openssh-client)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_port(port: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                return sock.recv(4).startswith(b"SSH")
        except OSError:
            time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def ssh(tmp_path_factory):
    """A running sshd, an ssh config naming it `thatch-test`, and a host
    `thatch-hang` that accepts connections and never says a word."""
    base = tmp_path_factory.mktemp("ssh")
    for name in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(base / name)], check=True)
    (base / "authorized_keys").write_text((base / "client.pub").read_text())
    os.chmod(base / "authorized_keys", 0o600)
    port = _free_port()
    (base / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {base / 'host'}\nPidFile {base / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {base / 'authorized_keys'}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\n"
        "LogLevel ERROR\n")
    os.makedirs("/run/sshd", exist_ok=True)
    server = subprocess.Popen([SSHD, "-D", "-e", "-f", str(base / "sshd_config")], stderr=subprocess.PIPE)
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept_forever() -> None:
        hang.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(hang.accept()[0])  # accepted, never answered
            except OSError:
                continue

    threading.Thread(target=accept_forever, daemon=True).start()
    try:
        if not _wait_port(port):
            server.kill()
            pytest.skip(f"sshd did not start: {server.stderr.read().decode(errors='replace')[:300]}")
        user = getpass.getuser()
        common = (f"  User {user}\n  IdentityFile {base / 'client'}\n  IdentitiesOnly yes\n  BatchMode yes\n"
                  "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n")
        (base / "ssh_config").write_text(f"Host thatch-test\n  HostName 127.0.0.1\n  Port {port}\n{common}"
                                         f"Host thatch-hang\n  HostName 127.0.0.1\n  Port {hang.getsockname()[1]}\n"
                                         f"{common}")
        yield f"ssh -F {base / 'ssh_config'}"
    finally:
        stop.set()
        server.terminate()
        server.wait(timeout=10)
        for sock in held:
            sock.close()
        hang.close()


def _over_ssh(clones, host: str, ssh_command: str) -> None:
    for clone in clones:
        clone.env["GIT_SSH_COMMAND"] = ssh_command
        clone.git("remote", "set-url", "origin", f"ssh://{host}{clone.remote}")


def test_sync_over_ssh(team, ssh):
    ann, bob = team(2)
    _over_ssh([ann, bob], "thatch-test", ssh)
    ann.ok("remember", "Over ssh", "Travels through a real sshd.")
    assert ann.sync()["status"] == "synced"
    assert bob.sync()["pulled"]["created"] == 1
    assert bob.labels() == ["Over ssh"]
    assert git(ann.path, "ls-remote", str(ann.remote), "refs/thatch/memories")


def test_a_server_that_never_answers_is_given_up_on(team, ssh):
    ann, = team(1)
    _over_ssh([ann], "thatch-hang", ssh)
    started = time.monotonic()
    result = ann.run("sync", THATCH_SYNC_TIMEOUT="2")
    took = time.monotonic() - started
    assert result.exit_code == 7, result
    assert "no answer within 2 s" in result.stderr and took < 8
    background = ann.run("sync", "--background", THATCH_SYNC_TIMEOUT="1")
    assert background.exit_code == 0 and "offline" in background.stderr
    time.sleep(0.2)
    lingering = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "thatch-hang" not in lingering  # the timeout killed git's whole process group, ssh included
    assert Path(ann.path).exists()
