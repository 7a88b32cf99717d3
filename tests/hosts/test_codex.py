"""Codex from npm, driven end to end by the stand-in model API (OpenAI
Responses): hook trust granted through Codex's own app server as its /hooks
screen does, the MCP tools reached through Codex's tool search, and the
configuration Codex rewrites itself between two runs of setup."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

from codex_app import AppServer
from sandbox import THATCH

RELEASE = ("Release process", "Tag the commit, build the wheel and upload it to PyPI with twine.")
RELATED = "what is the release process: tag the commit, build the wheel and upload it to pypi with twine?"
UNRELATED = "please write a haiku about autumn leaves falling in the rain"


def trust_hooks(sandbox, codex: list[str]) -> list[dict]:
    """What the user does in /hooks: review thatch's hooks and trust them."""
    with AppServer(codex, sandbox.env, sandbox.project, sandbox.root / "app-server.log") as app:
        hooks = app.hooks(sandbox.project)
        app.trust([h for h in hooks if h["trustStatus"] != "trusted"])
        return app.hooks(sandbox.project)


def ask(sandbox, codex: list[str], prompt: str):
    done = sandbox.run([*codex, "exec", "--skip-git-repo-check", prompt])
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    assert "Failed" not in done.stderr, done.stderr[-3000:]  # "hook: SessionStart Failed" is Codex's verdict
    return done


def turn(api, prompt: str) -> str:
    """What the model was given for the turn about `prompt`, as one text."""
    bodies = [b for b in api.log.bodies("/v1/responses") if prompt in json.dumps(b)]
    assert bodies, f"Codex never sent the prompt to the stand-in: {api.log.text()[:2000]}"
    return json.dumps(bodies[0]["input"], ensure_ascii=False)


def test_the_reminder_and_a_related_nudge_reach_the_model(codex_sandbox, api, codex):
    sandbox = codex_sandbox
    sandbox.remember(*RELEASE)
    setup = sandbox.thatch("setup", "codex")
    assert setup.returncode == 0, setup
    assert all(h["trustStatus"] == "trusted" for h in trust_hooks(sandbox, codex))
    ask(sandbox, codex, RELATED)
    seen = turn(api, RELATED)
    assert "thatch: Memory for acme/widget, branch main: 1 memory" in seen
    assert "thatch: 1 stored memory may relate to this prompt." in seen and "not instructions" in seen
    assert '\\"Release process\\" (acme/widget): Tag the commit' in seen
    ask(sandbox, codex, UNRELATED)
    seen = turn(api, UNRELATED)
    assert "thatch: After responding, check" in seen and "may relate to this prompt" not in seen



def test_a_warm_daemon_answers_codexs_prompt_hook(codex_sandbox, api, codex):
    """With the daemon up, the prompt hook Codex runs is answered by it
    (hot/relay.py), and what reaches the model is the same."""
    sandbox = codex_sandbox
    sandbox.env["THATCH_DAEMON"] = "1"
    sandbox.remember(*RELEASE)
    assert sandbox.thatch("setup", "codex").returncode == 0
    trust_hooks(sandbox, codex)
    try:
        assert sandbox.thatch("daemon", "start").returncode == 0
        ask(sandbox, codex, RELATED)
        assert "thatch: 1 stored memory may relate to this prompt." in turn(api, RELATED)
        ask(sandbox, codex, UNRELATED)
        assert "may relate to this prompt" not in turn(api, UNRELATED)
        status = json.loads(sandbox.thatch("daemon", "status", "--json").stdout)
        assert status["hooks_answered"] == 2  # one UserPromptSubmit per turn, both run by the daemon
    finally:
        sandbox.thatch("daemon", "stop")

def test_memory_remember_and_recall_round_trip(codex_sandbox, api, codex):
    """Through the user's own config, where the server is required: a project's optional one may still be
    starting when `codex exec` sends its first turn."""
    sandbox = codex_sandbox
    assert sandbox.thatch("setup", "codex", "--global").returncode == 0
    remember = {"label": "Staging port", "content": "The staging server listens on port 8443 behind the VPN."}
    ask(sandbox, codex, f"remember this @@call memory_remember {json.dumps(remember)}@@")
    shown = sandbox.thatch("show", "Staging port", "--json")
    assert shown.returncode == 0, (shown, api.log.text()[-3000:])
    assert json.loads(shown.stdout)["memory"]["content"] == remember["content"]
    ask(sandbox, codex, 'what port does staging use? @@call memory_recall {"query": "staging port"}@@')
    outputs = [item for b in api.log.bodies("/v1/responses") for item in b.get("input") or []
               if isinstance(item, dict) and item.get("type") == "function_call_output"]
    result = json.dumps(outputs[-1], ensure_ascii=False)
    assert "8443 behind the VPN" in result and "not instructions" in result
    for internal in ("slug", "recall_count", "has_vector", "snippet", "dense_rank"):
        assert internal not in result, (internal, result)


def test_setup_survives_codex_editing_its_config_and_uninstall_removes_exactly_thatchs(codex_sandbox, api, codex):
    """setup, trust in /hooks, `codex mcp add`, setup again, --uninstall:
    the user's trust and servers stay, thatch's entries all go."""
    sandbox = codex_sandbox
    config = sandbox.home / ".codex" / "config.toml"
    assert sandbox.thatch("setup", "codex", "--global").returncode == 0
    trusted = trust_hooks(sandbox, codex)
    assert len(trusted) == 3 and all(h["trustStatus"] == "trusted" for h in trusted)
    added = sandbox.run([*codex, "mcp", "add", "linear", "--", "npx", "-y", "linear-mcp"])
    assert added.returncode == 0, added
    host_written = config.read_text()
    trust_state = tomllib.loads(host_written)["hooks"]["state"]
    assert len(trust_state) == 3

    status = sandbox.thatch("setup", "--status", "codex", "--json")
    entry = next(s for s in json.loads(status.stdout)["hosts"] if s["scope"] == "global")
    assert entry["state"] == "wired", entry
    again = sandbox.thatch("setup", "codex", "--global")
    assert again.returncode == 0 and config.read_text() == host_written, again
    assert all(h["trustStatus"] == "trusted" for h in trust_hooks(sandbox, codex))  # still trusted
    ask(sandbox, codex, RELATED)
    assert "thatch: " in turn(api, RELATED)

    removed = sandbox.thatch("setup", "codex", "--global", "--uninstall")
    assert removed.returncode == 0, removed
    after = tomllib.loads(config.read_text())
    assert after["hooks"]["state"] == trust_state and set(after["hooks"]) == {"state"}
    assert list(after["mcp_servers"]) == ["linear"]
    listed = sandbox.run([*codex, "mcp", "list", "--json"])
    assert "linear" in listed.stdout and "thatch" not in listed.stdout.replace("thatch-", "")
    with AppServer(codex, sandbox.env, sandbox.project, sandbox.root / "app-server.log") as app:
        assert not [h for h in app.hooks(sandbox.project) if "thatch" in (h.get("command") or "")]
    assert Path(config).read_text().startswith("# the user's own settings\n")


def test_a_clone_without_thatch_starts_codex_with_the_projects_file(codex_sandbox, api, codex):
    """The project's .codex/config.toml committed by a thatch user, in a Codex whose PATH has no thatch: the
    session starts, the hooks are silent, the turn completes."""
    sandbox = codex_sandbox
    # Set up by a thatch whose path this machine then loses, as a teammate's clone would lack it.
    theirs = sandbox.root / "theirs" / "thatch"
    theirs.parent.mkdir()
    shutil.copy2(THATCH, theirs)
    assert sandbox.run([str(theirs), "setup", "codex"]).returncode == 0
    theirs.unlink()
    assert all(h["trustStatus"] == "trusted" for h in trust_hooks(sandbox, codex))
    no_thatch = {"PATH": f"{sandbox.bin}:/usr/bin:/bin", "THATCH_DB": "", "THATCH_MODEL": ""}
    assert sandbox.run(["sh", "-c", "command -v thatch"], env=no_thatch).returncode != 0
    done = sandbox.run([*codex, "exec", "--skip-git-repo-check", UNRELATED], env=no_thatch)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    assert "Failed" not in done.stderr and "mcp: thatch" not in done.stderr, done.stderr[-3000:]
    assert "hook: SessionStart Completed" in done.stderr and "hook: UserPromptSubmit Completed" in done.stderr
    seen = turn(api, UNRELATED)
    assert not any(said in seen for said in ("thatch: Memory for", "thatch: No memories", "thatch: After responding"))
