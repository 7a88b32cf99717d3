"""The network is the user's own `git`: `git fetch` and `git push` by
remote name (never a URL), with the user's credentials, helpers and ssh
configuration.

Every call runs in a process group of its own with a hard timeout, and
with progress on (`--progress`) so that a call that says nothing for
`stall` seconds is given up early: a server that accepts and never answers
would otherwise hold git for the whole timeout, or forever. Either kills the
whole group (git and its ssh). Git never asks on a
terminal (GIT_TERMINAL_PROMPT=0, no standard input): credential helpers and
ssh agents work, a password prompt fails at once. THATCH_SYNCING tells
thatch's own reference-transaction hook that this fetch is thatch's.

A push is `--force-with-lease` against the tip that was merged: when someone
pushed meanwhile, the lease loses and the caller merges again (run.py
backs off with jitter and, when it keeps losing, defers the push).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path

from .tree import LOCAL_REF

SYNCING = "THATCH_SYNCING"

# What git says, by outcome (lower-cased stderr).
_DISK_FULL = ("no space left on device", "disk quota exceeded", "file too large")
_AUTH = ("permission denied (publickey", "permission denied (password", "authentication failed",
         "could not read username", "could not read password", "invalid username or password",
         "host key verification failed", "invalid credentials")
_REFUSED = ("hook declined", "declined")
_OFFLINE = ("could not resolve host", "connection refused", "connection timed out", "network is unreachable",
            "no route to host", "could not read from remote repository", "unable to access",
            "connection reset", "connection closed", "operation timed out", "temporary failure in name resolution",
            "does not appear to be a git repository", "early eof", "the remote end hung up")
_DENIED = ("permission denied", "403", "not allowed", "denied", "read-only", "read only", "protected", "forbidden",
           "unauthorized", "authentication failed")
# A push that lost a race on the server ("[remote rejected] ... (failed to update ref)") lost the lease too.
_LEASE = ("stale info", "fetch first", "non-fast-forward", "[rejected]", "failed to update ref", "cannot lock ref",
          "failed to lock", "incorrect old value")


class GitResult:
    """What one git call did; `stalled` when it was killed for saying
    nothing for `seconds`, `timed_out` when killed either way."""

    __slots__ = ("code", "seconds", "stalled", "stderr", "timed_out")

    def __init__(self, code: int, stderr: str, timed_out: bool, seconds: float, stalled: bool = False) -> None:
        self.code, self.stderr, self.timed_out, self.seconds = code, stderr, timed_out, seconds
        self.stalled = stalled

    @property
    def ok(self) -> bool:
        return self.code == 0 and not self.timed_out

    def reason(self) -> str:
        """The last meaningful line git printed (for one-line reports)."""
        if self.stalled:
            return f"no progress for {self.seconds:g} s"
        if self.timed_out:
            return f"no answer within {self.seconds:g} s"
        lines = [line.strip() for line in self.stderr.replace("\r", "\n").splitlines() if line.strip()]
        # The line that names the failure (a refused key says so before git's "fatal: Could not read").
        telling = [line for line in lines if any(word in line.lower() for word in (*_DISK_FULL, *_AUTH, *_REFUSED))]
        useful = telling[:1] or [line for line in lines
                                 if line.lower().startswith(("fatal", "error", "remote:", " !", "!"))]
        from ..support.textsafe import one_line

        return one_line((useful or lines or [f"git exited with {self.code}"])[-1])[:300]


def git_env(env: Mapping[str, str]) -> dict[str, str]:
    found = dict(env)
    found["GIT_TERMINAL_PROMPT"] = "0"
    found[SYNCING] = "1"
    return found


def run(args: list[str], cwd: Path, env: Mapping[str, str], timeout: float, stall: float | None = None) -> GitResult:
    """`git ARGS` with a hard timeout, and a stall limit (seconds without a
    byte of output), either of which kills its whole process group."""
    import selectors
    import time

    proc = subprocess.Popen(["git", *args], cwd=cwd, env=git_env(env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    started = last = time.monotonic()
    err = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        selector.register(proc.stderr, selectors.EVENT_READ)
        while selector.get_map():
            now = time.monotonic()
            if now - started >= timeout:
                return _kill(proc, timeout, stalled=False)
            if stall and now - last >= stall:
                return _kill(proc, stall, stalled=True)
            left = min(started + timeout, last + stall if stall else started + timeout) - now
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                last = time.monotonic()
                if key.fileobj is proc.stderr and len(err) < 1 << 20:
                    err += chunk
    proc.wait()
    return GitResult(proc.returncode, err.decode("utf-8", "replace"), False, timeout)


def _kill(proc: subprocess.Popen, seconds: float, *, stalled: bool) -> GitResult:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.communicate()
    return GitResult(-9, "", True, seconds, stalled)


def fetch(cwd: Path, env: Mapping[str, str], remote: str, timeout: float, stall: float | None = None) -> GitResult:
    """Fetch the remote's memories ref into refs/thatch/remotes/REMOTE/.
    The refspec is a wildcard, so a remote without the ref is no error."""
    spec = f"+refs/thatch/memories*:refs/thatch/remotes/{remote}/memories*"
    return run(["fetch", "--prune", "--no-tags", "--no-write-fetch-head", "--progress", remote, spec], cwd, env,
               timeout, stall)


def push(cwd: Path, env: Mapping[str, str], remote: str, commit: str, expected: str | None,
         timeout: float, stall: float | None = None) -> GitResult:
    """Push `commit` as the remote's memories ref, only if it still is
    `expected` (None: only if the remote has none)."""
    ref = LOCAL_REF.decode()
    lease = f"--force-with-lease={ref}:{expected or ''}"
    return run(["push", "--progress", "--no-verify", lease, remote, f"{commit}:{ref}"], cwd, env, timeout, stall)


def classify(result: GitResult) -> str:
    """ok, offline (unreachable or silent: retry later), disk_full (here),
    auth (the remote does not accept this machine's credentials), refused
    (the server declines the push: a hook, a protected ref), denied (no
    push rights), lease (someone pushed meanwhile) or failed."""
    if result.ok:
        return "ok"
    if result.timed_out:
        return "offline"
    text = result.stderr.lower()
    if any(word in text for word in _DISK_FULL):
        return "disk_full"
    if any(word in text for word in _AUTH):
        return "auth"
    if any(word in text for word in _REFUSED):
        return "refused"
    if any(word in text for word in _LEASE) and "denied" not in text:
        return "lease"
    if any(word in text for word in _DENIED):
        return "denied"
    if any(word in text for word in _OFFLINE):
        return "offline"
    return "failed"
