"""Where each host keeps its configuration, and what thatch writes there:
`target(host, ...)` lists the files of one host and scope with what each
must hold (setup.py plans and writes them).

Host formats, checked against each host's documentation and its shipped
program (tests/hosts/ runs the real ones): Claude Code hooks in
settings.json, nested event groups; SessionStart and UserPromptSubmit
output read as {"hookSpecificOutput": {"additionalContext"}}; the tool-call
hook is PostToolBatch from 2.1.110, PostToolUse before (versions.py); MCP
servers in .mcp.json or ~/.claude.json. Cursor: .cursor/mcp.json,
.cursor/hooks.json `{"version": 1, "hooks": {event: [{"command"}]}}` with
sessionStart, postToolUse and beforeSubmitPrompt. Codex: config.toml
`[mcp_servers.<name>]` and `[[hooks.Event]]` tables (codex.py), AGENTS.md.

Every hook command names its host (`thatch reminder --host codex`) so its
output is the JSON that host reads, and carries a timeout well above the
hooks' own deadline (hot/agentio.py). Every MCP server entry carries the
terminal's settings that a host would not pass on (environment.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ...support.errors import InvalidInput
from ...support.textsafe import shell_word
from . import HOSTS, environment, versions
from .codex import CodexConfig
from .managed import GUARD, MARKDOWN, EnvJson, HooksJson, MarkedBlock, McpServerJson, guarded

# Seconds a host may let one hook run: far above the hooks' own 1.5 s
# deadline, so the deadline, not the host, decides (Claude Code's default is
# 60, Codex's 600; both read `timeout`).
HOOK_TIMEOUT = 10

INSTRUCTIONS = """\
## Memory (thatch)

This project keeps long-term memory in thatch, through its MCP tools (`memory_recall`, `memory_remember`, ...;
`mcp__thatch__memory_recall` and so on in Claude Code).

- Recall before you act: at the start of a task, and before answering anything about this project's architecture,
  conventions or past decisions, or the user's preferences, call `memory_recall` with a short query. Read a hit
  in full with `memory_show`.
- Remember what lasts: when you learn a decision, a convention, a non-obvious fix, or a preference or correction
  from the user, call `memory_remember` with a short label and self-contained content (`store: "global"` for what
  holds across projects). Update a memory (`overwrite: true`) rather than saving a near-copy.
- When a `thatch:` note says tool interactions are queued for extraction, call `get_extraction_payload` with the
  session id it gives (a background sub-agent is ideal), save what is durable with `memory_remember`, then call
  `extraction_done`.
- "Remember X": save it now. "Forget X": find it with `memory_recall`, then `memory_forget`.
"""


@dataclass
class Target:
    host: str
    scope: str  # "project" or "global"
    root: Path  # the project, or the user's configuration directory
    files: list[Any]  # McpServerJson, HooksJson, MarkedBlock, CodexConfig
    notes: list[str] = field(default_factory=list)


def project_root(cwd: Path) -> Path:
    """The working tree around `cwd` (setup writes at the top of a repository), else `cwd`."""
    from ...location.gitfs import locate

    repo = locate(cwd)
    return Path(repo.worktree) if repo is not None and repo.worktree else cwd


def instructions(path: Path, shared_with: tuple[str, ...] = ()) -> MarkedBlock:
    block = MarkedBlock(path, MARKDOWN, INSTRUCTIONS, "instructions")
    block.shared_with = shared_with
    return block


def target(host: str, env: Mapping[str, str], cwd: Path, executable: str, *, global_: bool,
           version: tuple[int, ...] | None = None) -> Target:
    """The files of `host` (at `global_` scope or the project's); `version`
    is the installed host's (versions.installed), which decides Claude
    Code's tool-call event."""
    if host not in HOSTS:
        from ...support.suggest import close, did_you_mean

        found = close(host, HOSTS)
        raise InvalidInput(f"unknown host {host!r}{did_you_mean(found)} (the hosts are {', '.join(HOSTS)})",
                           suggestions=found)
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    word = shell_word(executable, exact=True)  # the hosts run it: every character counts
    mcp = [executable, "mcp"]
    server_env = environment.server_env(env, str(cwd))
    recorded = ([f"the MCP server gets this terminal's {', '.join(sorted(server_env))} (hosts do not pass them on)"]
                if server_env else [])
    if host == "claude":
        event, command, why = versions.claude_tool_event(version)
        arguments = {"SessionStart": "reminder --host claude", "UserPromptSubmit": "flush-tools --host claude",
                     event: command}
        hooks = {name: f"{word} {line}" for name, line in arguments.items()}
        retired = tuple(e for e in ("PostToolBatch", "PostToolUse") if e != event)
        notes = [f"tool calls: {why}", *recorded]
        if global_:
            config = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
            state = config / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else home / ".claude.json"
            return Target(host, "global", config, [
                McpServerJson(state, mcp, server_env),
                HooksJson(config / "settings.json", hooks, nested=True, timeout=HOOK_TIMEOUT, retired=retired),
                instructions(config / "CLAUDE.md")],
                notes + [f"Claude Code rewrites {state} while it runs: set it up with Claude Code closed"])
        root = project_root(cwd)
        # .mcp.json and .claude/settings.json are the team's: they name
        # thatch through the guard; this machine's path and settings go to
        # the user's own settings.local.json, whose env Claude Code gives
        # every hook and MCP server of the session.
        shared = {name: guarded(line) for name, line in arguments.items()}
        local = environment.machine_env(env, str(cwd), executable)
        return Target(host, "project", root, [
            McpServerJson(root / ".mcp.json", ["sh", "-c", GUARD + "mcp"]),
            HooksJson(root / ".claude" / "settings.json", shared, nested=True, timeout=HOOK_TIMEOUT, retired=retired),
            EnvJson(root / ".claude" / "settings.local.json", local, environment.names()),
            instructions(root / "CLAUDE.md")],
            [f"tool calls: {why}", "Claude Code asks once before it starts a project's .mcp.json servers",
             *([f"this machine's {', '.join(sorted(local))} go to .claude/settings.local.json (yours, not the team's)"]
               if local else [])])
    if host == "cursor":
        arguments = {"sessionStart": "reminder --host cursor", "postToolUse": "buffer-tool",
                     "beforeSubmitPrompt": "flush-tools --host cursor"}
        hooks = {name: f"{word} {line}" for name, line in arguments.items()}
        notes = ["Cursor documents only continue/user_message as beforeSubmitPrompt's output: thatch's prompt"
                 " nudge is sent as additional_context too, which a Cursor that ignores it drops (the session-start"
                 " reminder and the instructions still apply)", *recorded]
        if global_:
            config = home / ".cursor"
            return Target(host, "global", config, [McpServerJson(config / "mcp.json", mcp, server_env),
                                                   HooksJson(config / "hooks.json", hooks, nested=False)],
                          notes + ["Cursor has no user-wide instruction file: the MCP server's instructions and the"
                                   " session-start reminder tell the agent when to recall and save"])
        root = project_root(cwd)
        # Cursor keeps no per-user file for a project: the project's files
        # name thatch through the guard when nothing particular to this
        # machine is needed, and hold this machine's path otherwise.
        local = environment.machine_env(env, str(cwd), executable)
        if local:
            notes.append(f"this machine's {', '.join(sorted(local))} are in .cursor/ (Cursor keeps no per-user file"
                         " for a project): do not commit them, or use --global")
        else:
            mcp, hooks = ["sh", "-c", GUARD + "mcp"], {name: guarded(line) for name, line in arguments.items()}
        return Target(host, "project", root, [
            McpServerJson(root / ".cursor" / "mcp.json", mcp, server_env),
            HooksJson(root / ".cursor" / "hooks.json", hooks, nested=False),
            instructions(root / "AGENTS.md", shared_with=("codex",))], notes)
    arguments = {"SessionStart": "reminder --host codex", "UserPromptSubmit": "flush-tools --host codex",
                 "PostToolUse": "buffer-tool"}
    trust = "Codex runs a hook only after you review and trust it (/hooks in Codex)"
    if global_:
        config = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        hooks = {name: f"{word} {line}" for name, line in arguments.items()}
        return Target(host, "global", config, [
            CodexConfig(config / "config.toml", mcp, hooks, env=server_env, timeout=HOOK_TIMEOUT),
            instructions(config / "AGENTS.md")],
            [trust, "the MCP server is required: Codex waits for it at session start, and stops with an error if it"
             " cannot start it (`thatch setup codex --uninstall` removes it)", *recorded])
    root = project_root(cwd)
    # .codex/config.toml is the team's and Codex keeps no per-user file for
    # a project: it names thatch through the guard, the server is optional
    # (a required one that exits at once would stop a teammate's Codex), and
    # this machine's settings are forwarded by name from the environment
    # Codex runs in (hooks inherit it; env_vars passes them to the server).
    local = environment.machine_env(env, str(cwd), executable)
    shared = {name: guarded(line) for name, line in arguments.items()}
    return Target(host, "project", root, [
        CodexConfig(root / ".codex" / "config.toml", ["sh", "-c", GUARD + "mcp"], shared, timeout=HOOK_TIMEOUT,
                    required=False, forward=environment.names()),
        instructions(root / "AGENTS.md", shared_with=("cursor",))],
        [trust, "Codex reads a project's .codex/config.toml only once the project is trusted",
         "the project's MCP server is optional, so Codex starts without it where thatch is missing; a `codex exec`"
         " one-shot may begin before it is ready (`thatch setup codex --global` makes it required in your own config)",
         *([f"this machine's {', '.join(f'{k}={v}' for k, v in sorted(local.items()))}: export them in the shell that"
            " starts Codex (Codex keeps no per-user file for a project; the shared file forwards them by name), or"
            " use --global"] if local else [])])
