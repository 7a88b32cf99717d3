"""The every-prompt hook answered by the warm daemon (hot/relay.py): the
console script hands argv, stdin, directory and environment to the daemon,
which runs the same hook code for it. Real processes, a real daemon (the
fake embedder), host-shaped payloads."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from thatch_cli.daemon import protocol, reach, runtime
from thatch_cli.hot.flush import WRITE_NUDGE

from helpers import THATCH, hook_payload, stop_all, thatch_process, wait_until

PROMPT = "how do we upload the wheel to pypi with twine for a release?"
REPO = Path(__file__).resolve().parents[2]


def world(env: dict, root: Path) -> dict:
    """`env` with its own database, config, cache and state under `root` (same HOME, same daemon)."""
    return {**env, "THATCH_DB": str(root / "thatch.db"), "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_CACHE_HOME": str(root / "cache"), "XDG_STATE_HOME": str(root / "state"),
            "XDG_DATA_HOME": str(root / "data")}


def seed(env: dict, project: Path) -> None:
    quiet = {**env, "THATCH_DAEMON": "0"}
    for args in (["remember", "Release process", "Tag the commit, build the wheel and upload it to PyPI with twine."],
                 ["remember", "Database pool", "The pool size is 20; CI times out below it.", "--file", "src/db.ts:1"]):
        assert thatch_process(args, env=quiet, cwd=project).returncode == 0
    batch = thatch_process(["buffer-batch"], env=quiet, cwd=project,
                           input=hook_payload("claude_post_tool_batch", project=project, session="s-a"))
    assert batch.returncode == 0


def start_daemon(env: dict, cwd: Path) -> int:
    started = thatch_process(["daemon", "start", "--json"], env=env, cwd=cwd)
    assert started.returncode == 0, started.stderr
    assert wait_until(lambda: reach.pointed_socket(env) is not None)
    return json.loads(started.stdout)["pid"]


# The console script itself, run by the interpreter, reporting at exit whether the hook's module was imported.
_CONSOLE = """
import atexit, os, runpy, sys
atexit.register(lambda: os.write(2, b"\\nRAN-HERE %d\\n" % ("thatch_cli.hot.flush" in sys.modules)))
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def console_hook(env: dict, cwd: Path, payload: str, *args: str) -> tuple[bytes, bool]:
    """`thatch flush-tools ARGS` by the console script; (stdout, whether this process ran the hook itself)."""
    done = subprocess.run([sys.executable, "-c", _CONSOLE, THATCH, "flush-tools", *args], env=env, cwd=cwd,
                          input=payload.encode(), capture_output=True, timeout=60)
    assert done.returncode == 0 and b"\nRAN-HERE " in done.stderr, done.stderr.decode()
    return done.stdout, b"\nRAN-HERE 1" in done.stderr


def in_process_hook(env: dict, cwd: Path, payload: str, *args: str) -> bytes:
    """The hook as it ran before the relay: hot/flush.main in this process."""
    code = "import sys\nfrom thatch_cli.hot.flush import main\nsys.exit(main(sys.argv[1:]))"
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=cwd, input=payload.encode(),
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


TIME = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?")


def files(root: Path) -> dict[str, bytes]:
    """Every file under `root` but the database, by relative path, the times in them blanked."""
    return {str(p.relative_to(root)): TIME.sub(b"<time>", p.read_bytes()) for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.startswith("thatch.db")}


def test_the_daemon_answers_byte_for_byte_as_the_hook_in_its_own_process(env, project, tmp_path):
    """Extraction nudge with the anchored file's memories, its firmer repeat,
    the recall nudge and the reminder: the same bytes, and the same files
    written, in the hook's own database and directories, not the daemon's."""
    relayed, local = world(env, tmp_path / "relayed"), world(env, tmp_path / "local")
    for each in (relayed, local):
        seed(each, project)
    start_daemon(env, project)  # the daemon's own environment: another database and directories
    prompts = [("s-a", "go on", "claude_user_prompt_submit", ()), ("s-a", "go on", "claude_user_prompt_submit", ()),
               ("s-b", PROMPT, "codex_user_prompt_submit", ("--host", "codex")),
               ("s-c", "go on", "cursor_before_submit_prompt", ("--json",))]
    outputs = []
    for session, text, name, args in prompts:
        payload = hook_payload(name, project=project, session=session, prompt=text)
        answer, ran_here = console_hook(relayed, project, payload, *args)
        assert not ran_here  # the daemon ran it
        assert answer == in_process_hook(local, project, payload, *args)
        outputs.append(answer.decode())
    status = subprocess.run([THATCH, "daemon", "status", "--json"], env=env, cwd=project, capture_output=True,
                            text=True, timeout=60)
    assert json.loads(status.stdout)["hooks_answered"] == len(prompts), status
    assert "queued for memory extraction" in outputs[0] and "Stored memories about the files you opened" in outputs[0]
    assert "Reminder:" in outputs[1] and "Stored memories about the files" not in outputs[1]
    assert '"Release process" (acme/widget)' in json.loads(outputs[2])["hookSpecificOutput"]["additionalContext"]
    assert json.loads(outputs[3]) == {"continue": True, "additional_context": WRITE_NUDGE}
    mine = files(tmp_path / "relayed")
    assert mine == files(tmp_path / "local") and any(name.startswith("state/") for name in mine)
    print(sorted(mine))
    assert not Path(env["THATCH_DB"]).exists()  # nothing landed in the daemon's own database


# Run under `python -S` with the checkout on sys.path; print the modules `run` added.
_PROBE = """
import os, sys
sys.path.insert(0, os.environ.pop("THATCH_PROBE_REPO"))
before = set(sys.modules)
from thatch_cli.__main__ import run
code = run(sys.argv[1:])
os.write(2, ("\\nMODULES " + " ".join(sorted(set(sys.modules) - before)) + "\\n").encode())
sys.exit(code)
"""


def probed(env: dict, cwd: Path, payload: str) -> tuple[bytes, set[str]]:
    done = subprocess.run([sys.executable, "-S", "-c", _PROBE, "flush-tools", "--host", "codex"],
                          env={**env, "THATCH_PROBE_REPO": str(REPO)}, cwd=cwd, input=payload.encode(),
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    line = done.stderr.decode().rsplit("MODULES ", 1)[1]
    return done.stdout, set(line.split())


def test_the_client_imports_almost_nothing(env, project, tmp_path):
    seed(env, project)
    start_daemon(env, project)
    payload = hook_payload("codex_user_prompt_submit", project=project, session="s-b", prompt=PROMPT)
    answer, modules = probed(env, project, payload)
    assert b"Release process" in answer
    # importlib (and what it brings under -S): the entry point's table of hot commands needs it anyway.
    assert modules <= {"__future__", "_socket", "select", "importlib", "importlib._bootstrap", "importlib._bootstrap_external",
                       "warnings", "thatch_cli", "thatch_cli.__main__", "thatch_cli.daemon", "thatch_cli.daemon.reach",
                       "thatch_cli.hot", "thatch_cli.hot.deadline", "thatch_cli.hot.relay"}, sorted(modules)
    # What the hook in its own process needs (and the relayed one does without).
    stop_all(env)
    _answer, modules = probed({**env, "THATCH_DAEMON": "0"}, project, payload)
    assert {"sqlite3", "pathlib", "thatch_cli.storage.memories"} <= modules


def test_a_stopped_daemon_costs_the_prompt_no_more_than_the_deadline(env, project):
    seed(env, project)
    pid = start_daemon(env, project)
    payload = hook_payload("codex_user_prompt_submit", project=project, session="s-b", prompt=PROMPT)
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        answer, _ = console_hook({**env, "THATCH_HOOK_DEADLINE": "1"}, project, payload, "--host", "codex")
        took = time.monotonic() - started
    finally:
        os.kill(pid, signal.SIGCONT)
    assert json.loads(answer)["hookSpecificOutput"]["additionalContext"] == WRITE_NUDGE  # the late answer
    assert took < 1.0 + 1.0, took  # the deadline counts from the process's start; the rest is interpreter start-up


def serve_once(path: str, reply: dict, seen: list) -> threading.Thread:
    """A stand-in for a daemon of another version at `path`: it answers one request with `reply`."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)  # a socket others could use too would not be asked (reach.pointed_socket)
    listener.listen(1)
    listener.settimeout(30)

    def answer() -> None:
        with listener:
            conn, _ = listener.accept()
            with conn:
                header, payload = protocol.receive(conn, max_payload=protocol.MAX_REQUEST_PAYLOAD)
                seen.append((header, payload))
                protocol.send(conn, reply)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return thread


def test_a_daemon_of_another_version_leaves_the_hook_to_its_own_process(env, project):
    seed(env, project)
    rundir = runtime.ensure_dir(env)
    Path(reach.user_dir(env), reach.POINTER).write_text(os.path.basename(rundir) + "\n")
    seen: list = []
    thread = serve_once(os.path.join(rundir, reach.SOCKET), protocol.error("mismatch", "daemon speaks 7"), seen)
    payload = hook_payload("claude_user_prompt_submit", project=project, session="s-a", prompt="go on")
    answer, ran_here = console_hook({**env, "THATCH_DAEMON": "0"}, project, payload)  # switched off: not asked
    assert ran_here and b"queued for memory extraction" in answer, (ran_here, answer)
    answer, ran_here = console_hook(env, project, payload)
    thread.join(10)
    [(header, stdin)] = seen
    assert header["op"] == "hook" and header["protocol"] == protocol.PROTOCOL_VERSION
    assert header["argv"] == ["flush-tools"] and header["cwd"] == str(project) and stdin == payload.encode()
    assert header["env"]["THATCH_DAEMON"] == "1" and header["env"]["THATCH_DB"] == env["THATCH_DB"]
    assert ran_here and b"Reminder:" in answer  # the second prompt of s-a, run here with the payload already read


def test_the_daemon_refuses_what_it_cannot_run_as_the_hook_s_own_process(env, project):
    seed(env, project)
    start_daemon(env, project)
    path = reach.pointed_socket(env)

    def ask(**changes) -> dict:
        request = {"op": "hook", "protocol": protocol.PROTOCOL_VERSION, "version": runtime.__version__,
                   "argv": ["flush-tools"], "env": env, "cwd": str(project), "umask": current_umask(), **changes}
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(path)
            protocol.send(sock, request, b"{}")
            return protocol.receive(sock)[0]

    assert ask() == {"ok": True, "code": 0}
    assert ask(protocol=7)["error"] == "mismatch"
    assert ask(version="0.0.1")["error"] == "mismatch"
    assert ask(env={**env, "THATCH_MODEL": "fake:32"})["error"] == "mismatch"  # another model's daemon
    assert ask(env={**env, "HOME": "/elsewhere"})["error"] == "declined"
    assert ask(env={**env, "THATCH_DB": "relative.db"})["error"] == "declined"
    assert ask(umask=current_umask() ^ 0o002)["error"] == "declined"
    assert ask(argv=["reminder"])["error"] == "bad_request"  # only the hooks it was given
    assert ask(argv=["_daemon", "serve"])["error"] == "bad_request"


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_the_pointer_names_only_a_private_socket(env, project):
    seed(env, project)
    start_daemon(env, project)
    path = reach.pointed_socket(env)
    assert path is not None and oct(os.stat(path).st_mode & 0o777) == "0o600"
    folder = os.path.dirname(path)
    os.chmod(folder, 0o755)
    assert reach.pointed_socket(env) is None  # and the hook then runs in its own process
    os.chmod(folder, 0o700)
    os.chmod(reach.user_dir(env), 0o755)
    assert reach.pointed_socket(env) is None  # the pointer itself is not read then
    os.chmod(reach.user_dir(env), 0o700)
    assert reach.pointed_socket(env) == path
    Path(reach.user_dir(env), reach.POINTER).write_text("../elsewhere\n")
    assert reach.pointed_socket(env) is None


def test_a_one_off_model_s_daemon_does_not_take_the_pointer_until_the_other_exits(env, project):
    start_daemon(env, project)
    first = reach.pointed_socket(env)
    other = {**env, "THATCH_MODEL": "fake:32"}
    assert thatch_process(["daemon", "start"], env=other, cwd=project).returncode == 0
    assert reach.pointed_socket(env) == first  # the daemon in use keeps it
    assert thatch_process(["daemon", "stop"], env=env, cwd=project).returncode == 0
    assert wait_until(lambda: reach.pointed_socket(env) not in (None, first), timeout=15)
    assert os.path.dirname(reach.pointed_socket(env)) == runtime.runtime_dir(other)
