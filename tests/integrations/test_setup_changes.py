"""`thatch setup` against what the hosts do between two runs: Codex
rewriting its config.toml and adding its trust tables, Claude Code of
another version, a second host sharing AGENTS.md, and a terminal whose
thatch settings a host would not pass on. (The real programs do the same in
tests/hosts/; these run in a second.)"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from .test_setup import EXE_DIR, setup, snapshot

CODEX_BEFORE = '# my codex settings\nmodel = "o3"   # keep this comment\n\n[projects."/p"]\ntrust_level = "trusted"\n'


@pytest.fixture
def project(git_repo, isolated_env):
    return git_repo("widget", remote="git@github.com:acme/widget.git")


def fake_claude(tmp_path: Path, version: str) -> str:
    """A `claude` on PATH that reports `version`, as `claude --version` does."""
    bin_dir = tmp_path / f"claude-{version}"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "claude").write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    (bin_dir / "claude").chmod(0o755)
    return f"{bin_dir}:{EXE_DIR}:{os.environ['PATH']}"


def setup_with(cli, project, path: str, *args):
    result = cli("setup", *args, "--json", cwd=project, PATH=path)
    return result.exit_code, (json.loads(result.stdout) if result.stdout.strip() else None), result.stderr


def test_claude_hooks_follow_the_installed_version(cli, project, tmp_path):
    settings = project / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "opus", "permissions": {"allow": ["Bash(npm test)"]}}\n')
    old = fake_claude(tmp_path, "2.1.48")
    code, done, _ = setup_with(cli, project, old, "claude")
    assert code == 0 and any("older than 2.1.110: PostToolUse" in note for note in done["notes"])
    hooks = json.loads(settings.read_text())["hooks"]
    assert "PostToolBatch" not in hooks and hooks["PostToolUse"][0]["hooks"][0]["command"].endswith("buffer-tool'")
    assert all(g["hooks"][0]["timeout"] == 10 for groups in hooks.values() for g in groups)

    new = fake_claude(tmp_path, "2.1.110")
    code, done, _ = setup_with(cli, project, new, "claude")
    hooks = json.loads(settings.read_text())["hooks"]
    assert code == 0 and "PostToolUse" not in hooks and hooks["PostToolBatch"][0]["hooks"][0]["command"].endswith(
        "buffer-batch'")
    # Claude Code downgraded: status warns, setup puts PostToolUse back.
    code, status, err = setup_with(cli, project, old, "--status", "claude")
    entry = next(s for s in status["hosts"] if s["scope"] == "project")
    assert entry["version"] == "2.1.48" and entry["state"] == "drifted"
    assert any("rejects PostToolBatch" in w for w in entry["warnings"])
    setup_with(cli, project, old, "claude")
    data = json.loads(settings.read_text())
    assert set(data["hooks"]) == {"SessionStart", "UserPromptSubmit", "PostToolUse"}
    assert data["model"] == "opus" and data["permissions"] == {"allow": ["Bash(npm test)"]}


def codex_rewrites(text: str, config_path: Path) -> str:
    """What Codex itself does to the file: `codex mcp add linear` regroups the
    server tables and drops comments between tables, and trusting the hooks
    in /hooks appends `[hooks.state."..."]` tables."""
    text = "\n".join(line for line in text.splitlines() if not line.startswith("# BEGIN") and
                     not line.startswith("# END")) + "\n"
    text = text.replace("[mcp_servers.thatch]", '[mcp_servers.linear]\ncommand = "npx"\nargs = ["-y", "linear-mcp"]'
                                                 "\n\n[mcp_servers.thatch]", 1)
    for event in ("session_start", "user_prompt_submit", "post_tool_use"):
        text += f'\n[hooks.state."{config_path}:{event}:0:0"]\nenabled = true\ntrusted_hash = "sha256:{event}"\n'
    return text


@pytest.mark.parametrize("global_", [False, True], ids=["project", "global"])
def test_codex_state_survives_setup_again_and_uninstall_removes_exactly_thatchs(cli, project, isolated_env,
                                                                                  global_):
    home = Path(isolated_env["HOME"])
    config = home / ".codex/config.toml" if global_ else project / ".codex/config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CODEX_BEFORE)
    flags = ["--global"] if global_ else []
    assert setup(cli, project, "codex", *flags)[0] == 0
    config.write_text(codex_rewrites(config.read_text(), config))
    host_state = tomllib.loads(config.read_text())["hooks"]["state"]
    rewritten = config.read_text()

    code, status, _ = setup(cli, project, "--status", "codex")
    entry = next(s for s in status["hosts"] if s["scope"] == ("global" if global_ else "project"))
    assert entry["state"] == "wired"  # not malformed: thatch's tables are found where Codex put them

    code, again, _ = setup(cli, project, "codex", *flags)
    assert code == 0 and config.read_text() == rewritten  # nothing the host wrote is touched
    code, removed, _ = setup(cli, project, "codex", *flags, "--uninstall")
    after = tomllib.loads(config.read_text())
    assert code == 0 and after["hooks"]["state"] == host_state  # the user's trust decisions stay
    assert list(after["mcp_servers"]) == ["linear"] and set(after["hooks"]) == {"state"}
    assert "thatch" not in config.read_text().replace("thatch-", "")
    assert config.read_text().startswith(CODEX_BEFORE)


def test_codex_setup_again_keeps_trust_tables_and_positions(cli, project):
    """Re-running setup (here after an upgrade changed the command) edits thatch's handlers in place: the
    trust tables Codex keyed by position stay, and so does every other byte."""
    config = project / ".codex/config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_BEFORE)
    setup(cli, project, "codex")
    trusted = codex_rewrites(config.read_text(), config)
    config.write_text(trusted.replace(f"{EXE_DIR}/thatch reminder --host codex", "/old/thatch reminder"))
    code, done, _ = setup(cli, project, "codex")
    assert code == 0 and config.read_text() == trusted, done


def test_codex_status_tells_rewritten_from_someone_elses(cli, project):
    config = project / ".codex/config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_BEFORE)
    setup(cli, project, "codex")
    config.write_text(config.read_text().replace('args = ["-c"', 'args = [ "-c"'))  # Codex's own formatting

    def state() -> str:
        status = setup(cli, project, "--status", "codex")[1]
        entry = next(s for s in status["hosts"] if s["scope"] == "project")
        return {f["role"]: f["state"] for f in entry["files"]}["mcp and hooks"]

    assert state() == "rewritten"
    config.write_text(config.read_text().replace('command = "sh"', 'command = "docker"'))
    assert state() == "foreign"


def test_the_shared_agents_md_stays_while_another_host_uses_it(cli, project):
    (project / "AGENTS.md").write_text("# Agents\n\nRun make check.\n")
    before = snapshot(project)
    setup(cli, project, "codex")
    setup(cli, project, "cursor")
    code, removed, _ = setup(cli, project, "codex", "--uninstall")
    agents = next(f for f in removed["files"] if f["role"] == "instructions")
    assert code == 0 and agents["action"] == "unchanged" and "cursor still uses it" in agents["changes"][0]
    assert "BEGIN thatch" in (project / "AGENTS.md").read_text()
    status = setup(cli, project, "--status", "cursor")[1]
    assert next(s for s in status["hosts"] if s["scope"] == "project")["state"] == "wired"
    setup(cli, project, "cursor", "--uninstall")
    assert snapshot(project) == before


def test_the_terminals_settings_reach_every_mcp_server(cli, project, tmp_path, isolated_env):
    db = tmp_path / "elsewhere" / "team.db"
    xdg = tmp_path / "xdg-config"
    env = {"THATCH_DB": str(db), "XDG_CONFIG_HOME": str(xdg), "THATCH_MODEL": "fake:64",
           "PATH": f"{EXE_DIR}:{os.environ['PATH']}"}
    for host in ("claude", "cursor", "codex"):
        assert cli("setup", host, "--json", cwd=project, **env).exit_code == 0
    # conftest's XDG_STATE_HOME and XDG_CACHE_HOME are the defaults under HOME: not recorded.
    expected = {"THATCH_DB": str(db), "XDG_CONFIG_HOME": str(xdg), "THATCH_MODEL": "fake:64",
                "XDG_RUNTIME_DIR": isolated_env["XDG_RUNTIME_DIR"], "THATCH_DAEMON": "0"}
    # Claude Code: the team's .mcp.json holds none of it; the user's own settings.local.json does.
    assert "env" not in json.loads((project / ".mcp.json").read_text())["mcpServers"]["thatch"]
    assert json.loads((project / ".claude/settings.local.json").read_text())["env"] == expected
    assert json.loads((project / ".cursor/mcp.json").read_text())["mcpServers"]["thatch"]["env"] == expected
    # Codex: the project's file forwards them by name from the environment Codex runs in; no values.
    codex = tomllib.loads((project / ".codex/config.toml").read_text())["mcp_servers"]["thatch"]
    assert "env" not in codex and set(expected) <= set(codex["env_vars"])
    assert cli("setup", "codex", "--global", "--json", cwd=project, **env).exit_code == 0
    codex = tomllib.loads((Path(isolated_env["HOME"]) / ".codex/config.toml").read_text())["mcp_servers"]["thatch"]
    assert codex["env"] == expected and codex["required"] is True
    # The defaults a host would compute anyway are not recorded.
    home = isolated_env["HOME"]
    plain = {"XDG_CONFIG_HOME": f"{home}/.config", "XDG_STATE_HOME": f"{home}/.local/state",
             "XDG_CACHE_HOME": f"{home}/.cache", "XDG_RUNTIME_DIR": f"/run/user/{os.getuid()}", "THATCH_DB": "",
             "THATCH_DAEMON": ""}
    from thatch_cli.integrations.hosts.environment import server_env

    assert server_env({**os.environ, **plain, "HOME": home}, str(project)) == {}
