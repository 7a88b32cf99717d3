"""A real OpenSSH server on 127.0.0.1 for tests and benchmarks: its own host
key on a free high port, key-only login as the current user, and an ssh
client configuration naming it (pass `ssh -F FILE`: OpenSSH ignores $HOME
for its configuration). Also a host that accepts connections and never
says a word, as a hung server does."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Self

SSHD = "/usr/sbin/sshd"
HOST = "thatch-test"  # the sshd
HANG = "thatch-hang"  # accepts, never answers


def missing() -> str | None:
    """Why an ssh test cannot run here (None: it can)."""
    if not os.path.exists(SSHD):
        return "needs openssh-server (apt-get install openssh-server)"
    if not (shutil.which("ssh") and shutil.which("ssh-keygen")):
        return "needs openssh-client (apt-get install openssh-client)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(port: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                return sock.recv(4).startswith(b"SSH")
        except OSError:
            time.sleep(0.1)
    return False


class SshServer:
    """`with SshServer(dir) as server:` server.command is the GIT_SSH_COMMAND."""

    def __init__(self, base: Path) -> None:
        self.base = Path(base)
        self.command = f"ssh -F {self.base / 'ssh_config'}"
        self._server: subprocess.Popen | None = None
        self._hang = socket.socket()
        self._held: list[socket.socket] = []
        self._stop = threading.Event()

    def __enter__(self) -> Self:
        base = self.base
        for name in ("host", "client"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(base / name)], check=True)
        (base / "authorized_keys").write_text((base / "client.pub").read_text())
        os.chmod(base / "authorized_keys", 0o600)
        port = _free_port()
        (base / "sshd_config").write_text(
            f"Port {port}\nListenAddress 127.0.0.1\nHostKey {base / 'host'}\nPidFile {base / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {base / 'authorized_keys'}\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\n"
            "StrictModes no\nUsePAM no\nLogLevel ERROR\n")
        os.makedirs("/run/sshd", exist_ok=True)
        self._server = subprocess.Popen([SSHD, "-D", "-e", "-f", str(base / "sshd_config")], stderr=subprocess.PIPE)
        self._hang.bind(("127.0.0.1", 0))
        self._hang.listen(8)
        self._hang.settimeout(0.2)
        threading.Thread(target=self._accept, daemon=True).start()
        if not _answers(port):
            self.__exit__()
            raise RuntimeError(f"sshd did not start: {self._server.stderr.read().decode(errors='replace')[:300]}")
        common = (f"  User {getpass.getuser()}\n  IdentityFile {base / 'client'}\n  IdentitiesOnly yes\n"
                  "  BatchMode yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n")
        (base / "ssh_config").write_text(f"Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n{common}"
                                         f"Host {HANG}\n  HostName 127.0.0.1\n  Port {self._hang.getsockname()[1]}\n"
                                         f"{common}")
        return self

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                self._held.append(self._hang.accept()[0])
            except OSError:
                continue

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.terminate()
            self._server.wait(timeout=10)
        for sock in self._held:
            sock.close()
        self._hang.close()
