"""The prompt hook (`flush-tools`) with a warm daemon, as hosts run it: it
hands the prompt to the daemon before its own imports and database work
(daemon/client.embed_ahead), and imports only what a prompt needs."""

from __future__ import annotations

import json
import os
import socket
import threading

import pytest

from thatch_cli.daemon import runtime
from thatch_cli.daemon.client import Client, embed_ahead
from thatch_cli.ops.context import Context
from thatch_cli.ops.remember import remember

from helpers import daemon_pids, hook_payload, run_probed, thatch_process

PROMPT = "how do we upload the wheel to pypi with twine for a release?"


@pytest.fixture
def project(git_repo):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


def seed(env, project) -> None:
    with Context(env={**env, "THATCH_DAEMON": "0"}, cwd=project) as ctx:
        remember(ctx, "Tag the commit, build the wheel and upload it to PyPI with twine.", "Release process")
        remember(ctx, "The staging server listens on port 8443 behind the VPN.", "Staging port")


def requests(env) -> int:
    status = Client(env).status()
    assert status is not None
    return status["requests"]


def test_the_warm_hook_gives_the_daemon_the_prompt_first_and_imports_no_uuid(env, project, tmp_path):
    seed(env, project)
    assert thatch_process(["daemon", "start"], env=env, cwd=project).returncode == 0
    payload = hook_payload("codex_user_prompt_submit", project=project, prompt=PROMPT)
    before = requests(env)
    # Another HOME: the daemon declines to run the hook for this process (hot/relay.py), which runs it itself.
    result, modules = run_probed(["flush-tools", "--host", "codex"], env={**env, "HOME": str(tmp_path)}, cwd=project,
                                 tmp_path=tmp_path, input=payload)
    assert result.returncode == 0 and modules, result.stderr
    assert "thatch_cli.hot.flush" in modules
    text = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert '"Release process" (acme/widget)' in text  # ranked through the warm daemon
    # The declined hook, the early embed, then the search (which finds the vector made); no learned rules,
    # so nothing more.
    assert requests(env) - before == 4  # and this status request
    # uuid brings platform: ~7 ms of a prompt's imports, for ids only a rule's write needs.
    assert {"uuid", "platform", "thatch_cli.ops.rules"} & modules == set()


def test_embed_ahead_never_starts_a_daemon_nor_fails(env, project):
    embed_ahead(env, PROMPT)  # none running
    embed_ahead({**env, "THATCH_DAEMON": "0"}, PROMPT)  # switched off
    embed_ahead({**env, "THATCH_MODEL": "/no/such/model"}, PROMPT)
    assert daemon_pids(env) == []


def test_embed_ahead_does_not_wait_for_the_answer(env):
    """A daemon that takes the request and never answers (busy, stopped)
    costs the hook nothing: embed_ahead sends and goes."""
    rundir = runtime.ensure_dir(env)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(os.path.join(rundir, runtime.SOCKET))
    server.listen(1)
    received = []

    def accept() -> None:
        conn, _ = server.accept()
        received.append(conn.recv(65536))
        conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        done = threading.Event()
        threading.Thread(target=lambda: (embed_ahead(env, PROMPT), done.set()), daemon=True).start()
        assert done.wait(5)
        thread.join(5)
        assert received and b'"op":"embed"' in received[0] and PROMPT.encode() in received[0]
    finally:
        server.close()
