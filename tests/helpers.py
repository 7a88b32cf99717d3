"""Helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

from thatch_cli.daemon import runtime
from thatch_cli.support.errors import ModelUnavailable

FIXED_NOW = datetime(2026, 11, 30, 12, 0, 0, 123000, tzinfo=timezone.utc)
# Spaces, a quote and a backslash: an embedded path must survive each shell's quoting.
ODD_EXE = "/opt/thatch's bin/with \\ slash/thatch"
THATCH = str(Path(sys.executable).with_name("thatch"))

# The original thatch's save of a memory (its SQL, with its named columns only):
# slug, store, label, content, embedding, model, branch, confidence, archived,
# created_at, updated_at, then archived again for the COALESCE.
ORIGINAL_UPSERT = """INSERT INTO entries (slug, store, label, content, embedding, model, branch, confidence, archived,
                                created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(slug, store) DO UPDATE SET label = excluded.label, content = excluded.content,
               embedding = excluded.embedding, model = excluded.model,
               branch = COALESCE(excluded.branch, entries.branch),
               confidence = COALESCE(excluded.confidence, entries.confidence),
               archived = COALESCE(?, entries.archived), updated_at = excluded.updated_at"""

# The original thatch's tables as it creates them (a file no thatch command has opened yet).
ORIGINAL_SCHEMA = """
CREATE TABLE stores (name TEXT PRIMARY KEY);
INSERT INTO stores (name) VALUES ('global');
CREATE TABLE entries (slug TEXT NOT NULL, store TEXT NOT NULL REFERENCES stores(name), label TEXT NOT NULL,
  content TEXT NOT NULL, embedding BLOB, model TEXT, branch TEXT, confidence INTEGER,
  archived INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
  recall_count INTEGER NOT NULL DEFAULT 0, last_recalled_at TEXT, PRIMARY KEY (slug, store));
CREATE TABLE dedup_pairs (store TEXT NOT NULL, slug_a TEXT NOT NULL, slug_b TEXT NOT NULL, status TEXT NOT NULL,
  checked_at TEXT NOT NULL, PRIMARY KEY (store, slug_a, slug_b));
"""


class BrokenEmbedder:
    """A model that cannot load, as offline with an uncached model."""

    name = "broken"
    dim = 64

    def embed_query(self, text):
        raise ModelUnavailable("model 'broken' cannot load (offline)")

    embed_passages = embed_query


def bench_models():
    """bench/models.py as a module, loaded by its path: bench/ left on
    sys.path would put every bench script before the installed modules for
    the rest of the run (tests/test_bench_names.py keeps their names apart)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "bench" / "models.py"
    spec = importlib.util.spec_from_file_location("thatch_bench_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def require(*tools: str) -> None:
    """Skip the calling test, saying why, when a program it drives is not installed
    (the shells and man's tools are optional: the README says what the full suite needs)."""
    import shutil

    import pytest

    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt-get install {' '.join(missing)})")


def git_env() -> dict[str, str]:
    """The environment for git in tests: inherited GIT_* dropped (GIT_DIR from
    a hook would point fixtures at the enclosing repository), user and system
    config ignored, a fixed identity."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="Test",
               GIT_AUTHOR_EMAIL="test@example.com", GIT_COMMITTER_NAME="Test", GIT_COMMITTER_EMAIL="test@example.com")
    return env


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=git_env(), check=True, capture_output=True,
                          text=True).stdout.strip()


class Result:
    """What one in-process run of `thatch ARGS` produced."""

    def __init__(self, exit_code: int, stdout: str, stderr: str) -> None:
        self.exit_code, self.stdout, self.stderr = exit_code, stdout, stderr

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def json(self):
        return json.loads(self.stdout)

    def __repr__(self) -> str:
        return f"Result(exit_code={self.exit_code}, stdout={self.stdout!r}, stderr={self.stderr!r})"


def run_main(args, ctx, input: str | None = None) -> Result:
    """Run `thatch ARGS` through the real entry point (thatch_cli.__main__.run:
    the fast path first, Typer for help and errors) with the test Context."""
    from thatch_cli.__main__ import run

    ctx.stdin = io.StringIO(input or "")
    ctx.stdout, ctx.stderr = io.StringIO(), io.StringIO()
    code = run(list(args), ctx)
    return Result(code, ctx.stdout.getvalue(), ctx.stderr.getvalue())


def typer_params(argv: list[str], monkeypatch) -> tuple[str, dict]:
    """The command and the parameters Typer would run it with."""
    import typer

    from thatch_cli.cli import app as app_module

    seen = {}

    def capture(command, ctx, options):
        seen["call"] = (f"{command.__module__}:{command.__qualname__}", dict(options))
        return 0

    monkeypatch.setattr(app_module, "run", capture)
    code = typer.main.get_command(app_module.app).main(args=list(argv), prog_name="thatch",
                                                       standalone_mode=False)
    assert code in (None, 0) and "call" in seen, argv
    return seen["call"]


PROBE_OUT_VAR = "THATCH_TEST_PROBE_OUT"

# Runs the real entry module (`python -m thatch_cli`, fast path included) and, at exit,
# writes the name of every module in sys.modules to the file named by PROBE_OUT_VAR.
# The variable is taken out of the environment first, so thatch and its children never see it.
_PROBE = f"""
import atexit, json, os, runpy, sys
def _report(out=os.environ.pop({PROBE_OUT_VAR!r})):
    with open(out, "w") as fh:
        json.dump(sorted(sys.modules), fh)
atexit.register(_report)
sys.argv = ["thatch", *sys.argv[1:]]
runpy.run_module("thatch_cli", run_name="__main__")
"""


def run_probed(args, *, env: dict[str, str], cwd: Path, tmp_path: Path, timeout: float = 60,
               input: str | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run `thatch ARGS` in a real process (the real entry point, fast path included); return the
    finished process and the full names of every module it had imported when it exited.

    Each call records into a fresh file of its own. The set is empty only if the process wrote no
    record (it died before exiting normally): callers assert that it is not empty before trusting
    an absence."""
    out = tmp_path / f"probe-modules-{uuid.uuid4().hex}.json"
    out.unlink(missing_ok=True)
    result = subprocess.run([sys.executable, "-c", _PROBE, *args], env={**env, PROBE_OUT_VAR: str(out)}, cwd=cwd,
                            input=input, capture_output=True, text=True, timeout=timeout)
    try:
        modules = set(json.loads(out.read_text()))
    except FileNotFoundError:
        return result, set()
    out.unlink()
    return result, modules


def top_level(modules) -> set[str]:
    """The top-level packages of these module names: {"rich.console", "json"} -> {"rich", "json"}."""
    return {name.split(".")[0] for name in modules}


def thatch_process(args, *, env: dict[str, str] | None = None, cwd: Path | None = None, input: str | None = None,
                   timeout: float = 60) -> subprocess.CompletedProcess:
    """`python -m thatch_cli ARGS` as a real process."""
    return subprocess.run([sys.executable, "-m", "thatch_cli", *args], env=env if env is not None else dict(os.environ),
                          cwd=cwd, input=input, capture_output=True, text=True, timeout=timeout)


# -- daemons ---------------------------------------------------------------------------


def daemon_pids(env: dict) -> list[int]:
    """Live daemon processes started for this test's runtime dir."""
    marker = f"XDG_RUNTIME_DIR={env['XDG_RUNTIME_DIR']}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read()
            if not any(mark in cmdline for mark in runtime.COMMAND_MARKS):
                continue
            with open(f"/proc/{name}/environ", "rb") as fh:
                if marker not in fh.read().split(b"\0"):
                    continue
        except OSError:
            continue
        if runtime.pid_alive(int(name)):
            found.append(int(name))
    return sorted(found)


def wait_until(predicate, timeout: float = 10.0, step: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def reap_zombie_children() -> None:
    """Collect daemons this test process spawned (maybe_warm, in-process
    clients) that have exited, so none lingers as a zombie."""
    me = str(os.getpid()).encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 1 and fields[0] == b"Z" and fields[1] == me:
            try:
                os.waitpid(int(name), os.WNOHANG)
            except ChildProcessError:
                pass


def stop_all(env: dict) -> None:
    for pid in daemon_pids(env):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    wait_until(lambda: not daemon_pids(env), timeout=5)
    time.sleep(0.05)
    reap_zombie_children()


# -- faults: another process's lock, a read-only file or mount --------------------------------

_LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE" if sys.argv[2] == "exclusive" else "BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
"""


class HeldLock:
    """Another process holding a write transaction on a database until
    closed (or killed): a real lock, as another writer holds it."""

    def __init__(self, path, exclusive: bool = False) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", _LOCKER, str(path),
                                         "exclusive" if exclusive else "immediate"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout.readline().strip() == "locked"

    def __enter__(self) -> "HeldLock":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=10)


def _works(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def read_only_prefix(directory: Path) -> list[str]:
    """A command prefix that runs its command with `directory` mounted
    read-only (a private mount namespace: root's, or an unprivileged user
    namespace's). Without namespaces, as a user other than root, the
    directory and its files are made read-only instead (undo with
    writable_again)."""
    script = 'mount --bind -o ro "$0" "$0" && exec "$@"'
    for unshare in (["unshare", "-m"], ["unshare", "-rm"]):
        if _works([*unshare, "sh", "-c", script, str(directory), "true"]):
            return [*unshare, "sh", "-c", script, str(directory)]
    assert os.geteuid() != 0, "root without mount namespaces cannot be denied writes"
    for path in directory.iterdir():
        path.chmod(0o444)
    directory.chmod(0o555)
    return []


def writable_again(directory: Path) -> None:
    directory.chmod(0o700)
    for path in directory.iterdir():
        path.chmod(0o600)


def thatch_pty(args, *, env: dict[str, str], cwd: Path | None = None, timeout: float = 60,
               rows: int = 40, cols: int = 100, answer: str | None = None) -> tuple[int, str]:
    """`python -m thatch_cli ARGS` on a pseudo-terminal (stdin, stdout and
    stderr all a terminal, as for a person typing; `answer` is typed once
    it asks something): (exit code, everything it printed, with the
    terminal's CRLF turned back into LF)."""
    code, _, screen = _on_a_terminal(args, env, cwd, timeout, rows, cols, stdout_to_pipe=False, answer=answer)
    return code, screen.replace("\r\n", "\n")


def thatch_stderr_pty(args, *, env: dict[str, str], cwd: Path | None = None,
                      timeout: float = 120) -> tuple[int, str, str]:
    """`python -m thatch_cli ARGS` with stderr on a pseudo-terminal and stdout
    a pipe: (exit code, stdout, everything the terminal received, raw)."""
    return _on_a_terminal(args, env, cwd, timeout, 40, 100, stdout_to_pipe=True)


def _on_a_terminal(args, env, cwd, timeout, rows, cols, *, stdout_to_pipe: bool,
                   answer: str | None = None) -> tuple[int, str, str]:
    import fcntl
    import pty
    import select
    import struct
    import termios

    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    stdin = subprocess.DEVNULL if stdout_to_pipe else child_fd
    stdout = subprocess.PIPE if stdout_to_pipe else child_fd
    proc = subprocess.Popen([sys.executable, "-m", "thatch_cli", *args], stdin=stdin, stdout=stdout,
                            stderr=child_fd, env=env, cwd=cwd, close_fds=True, start_new_session=True)
    os.close(child_fd)
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main_fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(main_fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
            if answer is not None and b"? [y/N]" in b"".join(chunks):
                os.write(main_fd, answer.encode())
                answer = None
        elif proc.poll() is not None:
            break
    os.close(main_fd)
    out = ""
    if stdout_to_pipe:
        out = proc.stdout.read().decode()
        proc.stdout.close()
    code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    return code, out, b"".join(chunks).decode("utf-8", "replace")


# -- MCP ---------------------------------------------------------------------------------


def mcp_env(**extra: str) -> dict[str, str]:
    """The environment for a `thatch mcp` a test spawns: the test's private
    paths (conftest), the fake model, no daemon unless the test says so."""
    return {**os.environ, "THATCH_MODEL": "fake:64", "THATCH_DAEMON": "0", **extra}


def mcp_session(env: dict[str, str], *args: str, cwd: Path | None = None):
    """An initialized MCP client session (the official SDK's) with a real
    `python -m thatch_cli mcp ARGS` process over stdio: `async with mcp_session(env) as session`."""
    from contextlib import asynccontextmanager

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    @asynccontextmanager
    async def session():
        params = StdioServerParameters(command=sys.executable, args=["-m", "thatch_cli", "mcp", *args], env=env,
                                       cwd=str(cwd) if cwd else None)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                yield client

    return session()


def call_json(result) -> tuple[bool, dict]:
    """(is_error, structured content) of a tools/call result."""
    return bool(result.is_error), result.structured_content


# -- agent hooks -------------------------------------------------------------------------

HOOK_DATA = Path(__file__).resolve().parent / "data" / "hooks"


def hook_payload(name: str, *, project: Path | str = "/tmp", prompt: str = "", session: str = "session-1") -> str:
    """The host-shaped payload tests/data/hooks/NAME.json, filled in, as the JSON text a host writes."""
    text = (HOOK_DATA / f"{name}.json").read_text()
    for marker, value in (("@PROJECT@", str(project)), ("@PROMPT@", prompt), ("@SESSION@", session)):
        text = text.replace(marker, json.dumps(value)[1:-1])
    json.loads(text)  # still well-formed
    return text


def hook(args, payload: str | None, *, env: dict[str, str], cwd: Path | None = None,
         timeout: float = 30) -> subprocess.CompletedProcess:
    """A hook command (`thatch reminder`, ...) as a host runs it: a real process, the payload on stdin."""
    return thatch_process(list(args), env=env, cwd=cwd, input=payload, timeout=timeout)
