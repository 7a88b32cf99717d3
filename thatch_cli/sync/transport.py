"""The network is the user's own `git`: `git fetch` and `git push` by
remote name (never a URL), with the user's credentials, helpers and ssh
configuration.

Every call runs in a process group of its own with a hard timeout: a server
that accepts and never answers would otherwise hold git forever, and a
timeout kills the whole group (git and its ssh). Git never asks on a
terminal (GIT_TERMINAL_PROMPT=0, no standard input): credential helpers and
ssh agents work, a password prompt fails at once. THATCH_SYNCING tells
thatch's own reference-transaction hook that this fetch is thatch's.

A push is `--force-with-lease` against the tip that was merged: when someone
pushed meanwhile, the lease loses and the caller merges again (ops/sync.py
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
_OFFLINE = ("could not resolve host", "connection refused", "connection timed out", "network is unreachable",
            "no route to host", "could not read from remote repository", "unable to access",
            "connection reset", "connection closed", "operation timed out", "temporary failure in name resolution",
            "does not appear to be a git repository", "early eof", "the remote end hung up")
_DENIED = ("permission denied", "403", "not allowed", "denied", "read-only", "read only", "protected", "forbidden",
           "unauthorized", "authentication failed")
_LEASE = ("stale info", "fetch first", "non-fast-forward", "rejected")


class GitResult:
    __slots__ = ("code", "seconds", "stderr", "timed_out")

    def __init__(self, code: int, stderr: str, timed_out: bool, seconds: float) -> None:
        self.code, self.stderr, self.timed_out, self.seconds = code, stderr, timed_out, seconds

    @property
    def ok(self) -> bool:
        return self.code == 0 and not self.timed_out

    def reason(self) -> str:
        """The last meaningful line git printed (for one-line reports)."""
        if self.timed_out:
            return f"no answer within {self.seconds:g} s"
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        useful = [line for line in lines if line.lower().startswith(("fatal", "error", "remote:", " !", "!"))]
        from ..support.textsafe import one_line

        return one_line((useful or lines or [f"git exited with {self.code}"])[-1])[:300]


def git_env(env: Mapping[str, str]) -> dict[str, str]:
    found = dict(env)
    found["GIT_TERMINAL_PROMPT"] = "0"
    found[SYNCING] = "1"
    return found


def run(args: list[str], cwd: Path, env: Mapping[str, str], timeout: float) -> GitResult:
    """`git ARGS` with a hard timeout that kills its whole process group."""
    proc = subprocess.Popen(["git", *args], cwd=cwd, env=git_env(env), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
        return GitResult(proc.returncode, err.decode("utf-8", "replace"), False, timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        return GitResult(-9, "", True, timeout)


def fetch(cwd: Path, env: Mapping[str, str], remote: str, timeout: float) -> GitResult:
    """Fetch the remote's memories ref into refs/thatch/remotes/REMOTE/.
    The refspec is a wildcard, so a remote without the ref is no error."""
    spec = f"+refs/thatch/memories*:refs/thatch/remotes/{remote}/memories*"
    return run(["fetch", "--prune", "--no-tags", "--no-write-fetch-head", "--quiet", remote, spec], cwd, env, timeout)


def push(cwd: Path, env: Mapping[str, str], remote: str, commit: str, expected: str | None,
         timeout: float) -> GitResult:
    """Push `commit` as the remote's memories ref, only if it still is
    `expected` (None: only if the remote has none)."""
    ref = LOCAL_REF.decode()
    lease = f"--force-with-lease={ref}:{expected or ''}"
    return run(["push", "--quiet", "--no-verify", lease, remote, f"{commit}:{ref}"], cwd, env, timeout)


def classify(result: GitResult) -> str:
    """ok, offline (retry later), denied (no push rights), lease (someone
    pushed meanwhile) or failed."""
    if result.ok:
        return "ok"
    if result.timed_out:
        return "offline"
    text = result.stderr.lower()
    if any(word in text for word in _LEASE) and "denied" not in text:
        return "lease"
    if any(word in text for word in _DENIED):
        return "denied"
    if any(word in text for word in _OFFLINE):
        return "offline"
    return "failed"
