"""Credentials as people and agents write them are held back from the
remote (prose passwords, tokens with invisible characters inside, split
over two lines, spaced out, hex-encoded), warned about when saved
(`remember`, MCP `memory_remember`, `import`), and never printed in full:
not in a held-back notice whose label is the token, not in a remote URL."""

from __future__ import annotations

import json
import subprocess

import anyio

from helpers import THATCH, call_json, git, mcp_env, mcp_session

TOKEN = "ghp_" + "Q8z2M4k9X7p1V5n3B6c0L2d4F8g1H3j5K7m9"
PROSE = "the admin password is Tr0ub4dor&3xKq9!zLm"
DISGUISED = {
    "Admin access": PROSE,
    "Root login": "Login as root with password hunter2hunter2",
    "Zero width": "CI token: " + TOKEN[:6] + "\u200b" + TOKEN[6:],
    "Split key": f"The key is {TOKEN[:20]}\n{TOKEN[20:]}",
    "Spaced key": "key " + " ".join(TOKEN),
    "Hex key": "hex: " + TOKEN.encode().hex(),
}


def _cli(clone, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([THATCH, *args], cwd=clone.path, env={**clone.env, "THATCH_MODEL": "fake:64",
                                                                   "THATCH_DAEMON": "0"},
                          capture_output=True, text=True, input=input, timeout=120)


def test_disguised_credentials_are_held_back_and_never_shown_whole(team):
    ann, bob = team(2)
    for label, content in DISGUISED.items():
        ann.ok("remember", label, content)
    ann.ok("remember", TOKEN, "The label is the token.")
    ann.ok("remember", "Fine", "Deploys go out on tuesdays after commit 3f786850e387550fdab836ed7e6dc881de23001b.")
    result = _cli(ann, "sync")
    assert result.returncode == 5, result
    assert TOKEN not in result.stdout + result.stderr and "Tr0ub4dor" not in result.stdout + result.stderr
    assert "ghp_…" in result.stderr
    data = json.loads(_cli(ann, "sync", "--json").stdout)
    assert sorted(h["label"] for h in data["held"]) == sorted([*DISGUISED, "ghp_…"])
    bob.sync()
    assert bob.labels() == ["Fine"]


def test_a_save_that_looks_like_a_credential_is_kept_here_and_says_so(team, tmp_path):
    ann, = team(1)
    saved = _cli(ann, "remember", "Admin access", PROSE)
    assert saved.returncode == 0 and "looks like it holds a credential" in saved.stderr, saved
    assert "prose-password: Tr0u…" in saved.stderr and "Tr0ub4dor" not in saved.stderr + saved.stdout
    quiet = _cli(ann, "remember", "Fine", "Deploys go out on tuesdays.", "--json")
    assert json.loads(quiet.stdout)["notices"] == []
    line = json.dumps({"store": ann.memory("Fine")["store"], "label": "Imported", "content": "# Imported\n\n"
                       + DISGUISED["Zero width"]})
    imported = _cli(ann, "import", "-", "--json", input=line + "\n")
    notices = json.loads(imported.stdout)["notices"]
    assert any(n.startswith("line 1: this looks like it holds a credential") for n in notices), imported
    assert TOKEN not in imported.stdout

    async def over_mcp():
        async with mcp_session(mcp_env(THATCH_DB=str(ann.db)), cwd=ann.path) as session:
            result = await session.call_tool("memory_remember", {"label": "From an agent", "content": PROSE})
            return result, call_json(result)

    result, (error, data) = anyio.run(over_mcp)
    text = "\n".join(c.text for c in result.content)
    assert not error and "looks like it holds a credential" in text and "will not share it" in text
    assert "Tr0ub4dor" not in text + json.dumps(data)
    assert ann.memory("From an agent") is not None  # saved all the same


def test_a_remote_url_is_shown_without_its_token(team):
    ann, = team(1, init=False)
    url = git(ann.path, "remote", "get-url", "origin")
    git(ann.path, "remote", "set-url", "origin", f"https://x-access-token:{TOKEN}@example.invalid/team.git")
    for args in (["sync", "init", "--yes"], ["sync", "init", "--yes", "--json"], ["sync", "status"],
                 ["sync", "status", "--json"]):
        result = _cli(ann, *args)
        assert TOKEN not in result.stdout + result.stderr, (args, result)
        assert "x-access-token:ghp_…@example.invalid" in result.stdout + result.stderr, (args, result)
    git(ann.path, "remote", "set-url", "origin", url)
