"""`thatch setup claude|cursor|codex` into a temporary home and project that
already hold foreign servers, hooks and instruction text: foreign bytes kept,
idempotent, --plan writes nothing, --uninstall gives back every file byte for
byte, malformed files refused untouched, and the installed hooks really run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from thatch_cli.integrations.hosts.managed import guarded

from helpers import git, hook_payload

EXE_DIR = str(Path(sys.executable).parent)

FOREIGN = {
    ".mcp.json": '{\n    "mcpServers": {\n        "github": {\n            "command": "npx",\n'
                 '            "args": ["-y", "@modelcontextprotocol/server-github"]\n        }\n    }\n}\n',
    ".claude/settings.json": '{\n  "permissions": {"allow": ["Bash(npm test)"]},\n  "hooks": {\n'
                             '    "UserPromptSubmit": [\n      {"hooks": [{"type": "command", "command": "./lint-prompt.sh"}]}\n'
                             '    ],\n    "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "say done"}]}]\n'
                             '  }\n}',
    "CLAUDE.md": "# Widget\n\nUse pnpm, never npm.",
    "AGENTS.md": "# Agents\n\nRun `make check` before you stop.\n",
    ".cursor/mcp.json": '{"mcpServers": {"docs": {"url": "https://docs.example.com/mcp"}}}\n',
    ".cursor/hooks.json": '{\n  "version": 1,\n  "hooks": {\n    "afterFileEdit": [{"command": "prettier --write"}]\n  }\n}\n',
    ".codex/config.toml": '# my codex settings\nmodel = "gpt-5-codex"  # keep\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
                          'args = []\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "say bye"\n',
}
HOME_FOREIGN = {
    ".claude.json": json.dumps({"numStartups": 12, "projects": {"/src/x": {"allowedTools": []}},
                                "mcpServers": {"sentry": {"command": "sentry-mcp"}}}, indent=2),
    ".claude/settings.json": '{"model": "opus"}\n',
    ".codex/config.toml": '[mcp_servers.other]\ncommand = "other"\n',
}


def snapshot(*roots: Path) -> dict[str, bytes]:
    found = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if ".git" in path.parts or ".local" in path.parts or ".cache" in path.parts or ".config" in path.parts:
                continue
            found[str(path)] = path.read_bytes() if path.is_file() else b"<dir>"
    return found


@pytest.fixture
def places(git_repo, isolated_env):
    project = git_repo("widget", remote="git@github.com:acme/widget.git")
    home = Path(isolated_env["HOME"])
    for root, files in ((project, FOREIGN), (home, HOME_FOREIGN)):
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
    return project, home


def setup(cli, project, *args):
    result = cli("setup", *args, "--json", cwd=project, PATH=f"{EXE_DIR}:{os.environ['PATH']}")
    return result.exit_code, (json.loads(result.stdout) if result.stdout.strip() else None), result.stderr


def installed_commands(host: str, scope_root: Path, global_: bool) -> dict[str, str]:
    """event -> the command setup installed, read back the way the host reads it."""
    if host == "claude":
        settings = json.loads((scope_root / (".claude/settings.json" if not global_ else "settings.json")).read_text())
        return {event: groups[-1]["hooks"][0]["command"] for event, groups in settings["hooks"].items()
                if event in ("SessionStart", "UserPromptSubmit", "PostToolBatch", "PostToolUse")}
    if host == "cursor":
        hooks = json.loads((scope_root / ".cursor/hooks.json" if not global_ else scope_root / "hooks.json").read_text())
        return {event: entries[-1]["command"] for event, entries in hooks["hooks"].items() if event != "afterFileEdit"}
    config = tomllib.loads((scope_root / (".codex/config.toml" if not global_ else "config.toml")).read_text())
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in config["hooks"].items() if event != "Stop"}


def host_env(project: Path, **extra: str) -> dict[str, str]:
    """The environment Claude Code gives a project's hooks: the user's (thatch
    on PATH) plus the env of their own .claude/settings.local.json."""
    local = project / ".claude/settings.local.json"
    own = json.loads(local.read_text()).get("env", {}) if local.exists() else {}
    return {**os.environ, "PATH": f"{EXE_DIR}:{os.environ['PATH']}", **extra, **own}


SESSION_EVENT = {"claude": ("SessionStart", "claude_session_start"), "cursor": ("sessionStart", "cursor_session_start"),
                 "codex": ("SessionStart", "codex_session_start")}


@pytest.mark.parametrize("host", ["claude", "cursor", "codex"])
@pytest.mark.parametrize("global_", [False, True], ids=["project", "global"])
def test_plan_install_again_status_and_uninstall_byte_for_byte(cli, places, host, global_):
    project, home = places
    flags = ["--global"] if global_ else []
    before = snapshot(project, home)

    code, plan, _ = setup(cli, project, host, *flags, "--plan")
    assert code == 0 and plan["written"] is False and any(f["changes"] for f in plan["files"])
    assert snapshot(project, home) == before and not (home / ".local/state/thatch/setup.json").exists()

    code, done, _ = setup(cli, project, host, *flags)
    assert code == 0 and done["written"] and [f["action"] for f in done["files"]] == [f["action"] for f in plan["files"]]
    installed = snapshot(project, home)
    for root, files in ((project, FOREIGN), (home, HOME_FOREIGN)):  # foreign content is all still there
        for name, text in files.items():
            after = (root / name).read_text()
            if name.endswith(".md") or name.endswith(".toml"):
                assert after.startswith(text), name
            else:
                _assert_contains_json(json.loads(text), json.loads(after), name)

    code, again, _ = setup(cli, project, host, *flags)
    assert code == 0 and {f["action"] for f in again["files"]} <= {"unchanged"}
    assert snapshot(project, home) == installed

    code, status, _ = setup(cli, project, "--status", host)
    scope = "global" if global_ else "project"
    assert next(s for s in status["hosts"] if s["scope"] == scope)["state"] == "wired"

    event, payload = SESSION_EVENT[host]
    command = installed_commands(host, home / {"claude": ".claude", "cursor": ".cursor", "codex": ".codex"}[host]
                                 if global_ else project, global_)[event]
    ran = subprocess.run(command, shell=True, input=hook_payload(payload, project=project), capture_output=True,
                         text=True, env=host_env(project, THATCH_DAEMON="0"), timeout=30)
    assert ran.returncode == 0 and "thatch: " in ran.stdout, ran

    code, removed, _ = setup(cli, project, host, *flags, "--uninstall")
    assert code == 0 and removed["action"] == "uninstall"
    assert snapshot(project, home) == before


def _assert_contains_json(original, now, where):
    if isinstance(original, dict):
        for key, value in original.items():
            _assert_contains_json(value, now[key], f"{where}.{key}")
    elif isinstance(original, list):
        assert now[: len(original)] == original, where
    else:
        assert now == original, where


def test_claude_hooks_keep_foreign_groups_and_replace_old_thatch_ones(cli, places):
    project, _home = places
    settings = project / ".claude/settings.json"
    original = json.loads(settings.read_text())
    original["hooks"]["SessionStart"] = [{"hooks": [{"type": "command", "command": "thatch reminder"}]}]
    settings.write_text(json.dumps(original, indent=2))
    code, done, _ = setup(cli, project, "claude")
    assert code == 0
    hooks = json.loads(settings.read_text())["hooks"]
    assert [g["hooks"][0]["command"] for g in hooks["SessionStart"]] == [guarded("reminder --host claude")]
    assert hooks["UserPromptSubmit"][0]["hooks"][0]["command"] == "./lint-prompt.sh"
    assert hooks["Stop"] == original["hooks"]["Stop"]
    assert any("replace the SessionStart hook" in c for f in done["files"] for c in f["changes"])


def test_a_malformed_file_is_reported_and_nothing_is_written(cli, places):
    project, home = places
    (project / ".claude/settings.json").write_text('{"hooks": {},}')
    (project / ".mcp.json").unlink()
    before = snapshot(project, home)
    code, error, _ = setup(cli, project, "claude")
    assert code == 4 and "settings.json is not valid JSON" in error["error"]["message"]
    assert snapshot(project, home) == before  # not even the .mcp.json it would have created
    (project / ".codex/config.toml").write_text("model = \n")
    code, error, _ = setup(cli, project, "codex")
    assert code == 4 and "config.toml is not valid TOML" in error["error"]["message"]
    for odd in ('hooks = "x"\n', "[hooks]\nSessionStart = []\n", 'mcp_servers = "x"\n'):
        (project / ".codex/config.toml").write_text(odd)  # valid TOML thatch's tables cannot join
        code, error, _ = setup(cli, project, "codex")
        assert code == 4 and "must be written as [tables]" in error["error"]["message"], error
        assert (project / ".codex/config.toml").read_text() == odd


def test_foreign_entries_named_thatch_are_refused(cli, places):
    project, _home = places
    (project / ".mcp.json").write_text('{"mcpServers": {"thatch": {"command": "docker", "args": ["run", "x"]}}}')
    code, error, _ = setup(cli, project, "claude")
    assert code == 4 and "does not run `thatch mcp`" in error["error"]["message"]
    config = project / ".codex/config.toml"
    with open(config, "a") as fh:
        fh.write('\n[mcp_servers.thatch]\ncommand = "docker"\nargs = ["run", "x"]\n')
    before = config.read_text()
    code, error, _ = setup(cli, project, "codex")
    assert code == 4 and "someone else's" in error["error"]["message"] and config.read_text() == before
    code, status, _ = setup(cli, project, "--status", "codex")
    files = next(s for s in status["hosts"] if s["scope"] == "project")["files"]
    assert {f["role"]: f["state"] for f in files}["mcp and hooks"] == "foreign"


def test_a_thatch_server_added_by_the_host_is_recognised_and_kept_in_place(cli, places):
    """`codex mcp add thatch -- thatch mcp` (or an older setup) wrote the server: setup updates it where it is."""
    project, _home = places
    config = project / ".codex/config.toml"
    with open(config, "a") as fh:
        fh.write('\n[mcp_servers.thatch]\ncommand = "thatch"\nargs = ["mcp"]\n\n[mcp_servers.zeta]\ncommand = "z"\n')
    code, done, _ = setup(cli, project, "codex")
    assert code == 0, done
    text = config.read_text()
    assert text.index("[mcp_servers.thatch]") < text.index("[mcp_servers.zeta]")  # updated in place
    server = tomllib.loads(text)["mcp_servers"]["thatch"]
    assert server["command"] == "sh" and server["args"][1].endswith('exec "$t" mcp')  # the project's: guarded


def test_status_sees_drift_and_setup_repairs_it(cli, places):
    project, _home = places
    setup(cli, project, "cursor")
    hooks = project / ".cursor/hooks.json"
    hooks.write_text(hooks.read_text().replace(f"{EXE_DIR}/thatch", "/old/venv/bin/thatch"))
    code, status, _ = setup(cli, project, "--status", "cursor")
    entry = next(s for s in status["hosts"] if s["scope"] == "project")
    assert entry["state"] == "drifted"
    assert {f["role"]: f["state"] for f in entry["files"]}["hooks"] == "outdated"
    setup(cli, project, "cursor")
    assert "/old/venv" not in hooks.read_text()
    assert next(s for s in setup(cli, project, "--status")[1]["hosts"]
                if s["host"] == "cursor" and s["scope"] == "project")["state"] == "wired"


def test_claude_config_dir_and_codex_home_are_honoured(cli, places, tmp_path):
    project, home = places
    claude_dir, codex_dir = tmp_path / "claude-config", tmp_path / "codex-home"
    result = cli("setup", "claude", "--global", "--json", cwd=project, CLAUDE_CONFIG_DIR=str(claude_dir),
                 PATH=f"{EXE_DIR}:{os.environ['PATH']}")
    paths = {f["role"]: f["path"] for f in json.loads(result.stdout)["files"]}
    assert paths == {"mcp": str(claude_dir / ".claude.json"), "hooks": str(claude_dir / "settings.json"),
                     "instructions": str(claude_dir / "CLAUDE.md")}
    assert json.loads((claude_dir / ".claude.json").read_text())["mcpServers"]["thatch"]["args"] == ["mcp"]
    result = cli("setup", "codex", "--global", "--json", cwd=project, CODEX_HOME=str(codex_dir),
                 PATH=f"{EXE_DIR}:{os.environ['PATH']}")
    assert json.loads(result.stdout)["files"][0]["path"] == str(codex_dir / "config.toml")
    assert not (home / ".codex/AGENTS.md").exists()


def test_a_link_inside_the_project_is_written_through(cli, places):
    project, _home = places
    (project / "docs").mkdir()
    shared = project / "docs" / "CLAUDE.md"
    shared.write_text("# Shared rules\n")
    (project / "CLAUDE.md").unlink()
    (project / "CLAUDE.md").symlink_to(shared)
    code, plan, _ = setup(cli, project, "claude", "--plan")
    assert code == 0 and next(f for f in plan["files"] if f["role"] == "instructions")["link"] == str(shared)
    setup(cli, project, "claude")
    assert (project / "CLAUDE.md").is_symlink() and "BEGIN thatch" in shared.read_text()
    setup(cli, project, "claude", "--uninstall")
    assert shared.read_text() == "# Shared rules\n"


@pytest.mark.parametrize("name", [".mcp.json", "CLAUDE.md", ".claude/settings.json", ".claude", "dangling"])
def test_a_link_out_of_the_project_is_refused_and_named(cli, places, tmp_path, name):
    """A cloned repository can plant `.mcp.json -> ~/somewhere`: setup never writes through it (issue 22)."""
    project, home = places
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.json"
    victim.write_text('{"mine": true}\n')
    link = project / (".mcp.json" if name == "dangling" else name)
    if link.is_dir():
        import shutil

        shutil.copytree(link, outside / "claude-dir")
        shutil.rmtree(link)
        link.symlink_to(outside / "claude-dir")
    else:
        link.unlink(missing_ok=True)
        link.symlink_to(outside / "missing.json" if name == "dangling" else victim)
    before = snapshot(project, home, outside)
    for flags in (["--plan"], [], ["--uninstall"]):
        code, error, _ = setup(cli, project, "claude", *flags)
        assert code == 4, (flags, error)
        assert str(link) in error["error"]["message"] and "symbolic link" in error["error"]["message"]
    assert snapshot(project, home, outside) == before and not (outside / "missing.json").exists()


@pytest.mark.parametrize(("host", "name", "target"), [("claude", "CLAUDE.md", ".git/config"),
                                                      ("codex", "AGENTS.md", ".git/hooks/post-checkout"),
                                                      ("claude", "CLAUDE.md", ".git/hooks/post-checkout")])
def test_a_link_into_git_is_refused_and_named(cli, places, host, name, target):
    """A cloned repository can plant `CLAUDE.md -> .git/config`: inside the
    project, but git's, not setup's (issue 26)."""
    project, home = places
    hook = project / target
    hook.parent.mkdir(parents=True, exist_ok=True)
    if not hook.exists():
        hook.write_text("#!/bin/sh\nexit 0\n")
    link = project / name
    link.unlink(missing_ok=True)
    link.symlink_to(hook)
    before, kept = snapshot(project, home), hook.read_bytes()
    for flags in (["--plan"], [], ["--uninstall"]):
        code, error, _ = setup(cli, project, host, *flags)
        assert code == 4, (flags, error)
        assert str(link) in error["error"]["message"] and "inside git's own files" in error["error"]["message"]
    assert snapshot(project, home) == before and hook.read_bytes() == kept
    assert "bad config" not in git(project, "config", "--list")


@pytest.mark.parametrize(("host", "name", "text"), [("claude", ".mcp.json", "[" * 100_000 + "]" * 100_000),
                                                    ("codex", ".codex/config.toml",
                                                     "a = " + "[" * 100_000 + "]" * 100_000)])
def test_a_deeply_nested_config_is_refused_cleanly(cli, places, host, name, text):
    project, home = places
    (project / name).parent.mkdir(exist_ok=True)
    (project / name).write_text(text)
    before = snapshot(project, home)
    for flags in (["--plan"], [], ["--uninstall"]):
        code, error, _ = setup(cli, project, host, *flags)
        assert code == 4, (flags, error)
        assert "nested too deeply" in error["error"]["message"] and name in error["error"]["message"]
    assert snapshot(project, home) == before


def test_usage(cli, places):
    project, _home = places
    code, error, _ = setup(cli, project)
    assert code == 2 and "name the host" in error["error"]["message"]
    code, error, _ = setup(cli, project, "vscode")
    assert code == 2
    code, error, _ = setup(cli, project, "--status", "--plan")
    assert code == 2 and "--status only reports" in error["error"]["message"]
    text = cli("setup", "claude", "--plan", cwd=project, PATH=f"{EXE_DIR}:{os.environ['PATH']}").stdout
    assert text.startswith("Would set up claude (project:") and "Nothing was written (--plan)." in text


def test_after_setup_claude_a_session_gets_the_reminder_the_nudge_and_the_extraction_nudge(cli, places):
    """The hooks as Claude Code runs them from the settings setup wrote: the
    command line through a shell, the host's payload on stdin."""
    project, _home = places
    env = host_env(project, THATCH_DAEMON="0", THATCH_MODEL="fake:64")
    for label, body in [("Release process", "Tag the commit, build the wheel and upload it to PyPI with twine."),
                        *[(f"Note {i}", f"unrelated detail number {i} about the office plants") for i in range(10)]]:
        assert cli("remember", label, body, cwd=project, THATCH_MODEL="fake:64").exit_code == 0
    setup(cli, project, "claude")
    commands = installed_commands("claude", project, False)

    def run(event: str, payload: str) -> str:
        done = subprocess.run(commands[event], shell=True, input=payload, capture_output=True, text=True, env=env,
                              cwd=project, timeout=30)
        assert done.returncode == 0 and not done.stderr, done
        return done.stdout

    def context(event: str, payload: str) -> str:
        answer = json.loads(run(event, payload))["hookSpecificOutput"]
        assert answer["hookEventName"] == event
        return answer["additionalContext"]

    assert context("SessionStart", hook_payload("claude_session_start", project=project)).startswith(
        "thatch: Memory for acme/widget, branch main: 11 memories")
    nudge = context("UserPromptSubmit", hook_payload("claude_user_prompt_submit", project=project,
                                                     prompt="how do we upload the wheel to pypi with twine?"))
    assert '- "Release process" (acme/widget)' in nudge
    for call in json.loads(hook_payload("claude_post_tool_batch", project=project))["tool_calls"]:  # PostToolUse
        assert run("PostToolUse", json.dumps({"session_id": "session-1", "cwd": str(project), **call})) == ""
    extraction = context("UserPromptSubmit", hook_payload("claude_user_prompt_submit", project=project, prompt="next"))
    assert extraction.startswith("thatch: 2 tool interactions from this session are queued")


def test_the_original_thatchs_block_is_left_alone_and_mentioned(cli, places):
    project, _home = places
    original = ("# Widget\n\n# Persistence\n\nThatch provides persistent memory across Claude Code sessions.\n\n"
                '"Forget X" - `memory_recall` to find it, then `memory_forget`.\n')
    (project / "CLAUDE.md").write_text(original)
    code, done, _ = setup(cli, project, "claude")
    assert code == 0 and any("original thatch's '# Persistence'" in note for note in done["notes"])
    assert (project / "CLAUDE.md").read_text().startswith(original)
    setup(cli, project, "claude", "--uninstall")
    assert (project / "CLAUDE.md").read_text() == original


def test_a_write_failing_half_way_can_still_be_undone(cli, places, monkeypatch):
    """The record of what setup changed is kept even when a later file cannot
    be written, so --uninstall gives back the files already changed."""
    from thatch_cli.integrations.hosts import setup as host_setup

    project, home = places
    for name in (".mcp.json", ".claude/settings.json", "CLAUDE.md"):  # setup creates whichever comes first
        (project / name).unlink()
    before = snapshot(project, home)
    real_write, calls = host_setup._write, []

    def failing(*args, **kwargs):
        calls.append(args[0])
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_write(*args, **kwargs)

    monkeypatch.setattr(host_setup, "_write", failing)
    code, data, _ = setup(cli, project, "claude")
    assert code == 4 and len(calls) == 2 and snapshot(project, home) != before
    assert "No space left on device" in data["error"]["message"] and "--uninstall" in data["error"]["message"]
    monkeypatch.setattr(host_setup, "_write", real_write)
    code, _, err = setup(cli, project, "claude", "--uninstall")
    assert code == 0, err
    assert snapshot(project, home) == before
