"""`thatch setup claude|cursor|codex`: wiring a coding agent's host to
thatch, safely.

Per host and scope (the project, or the user's configuration with
--global) setup manages three things: the MCP server registration, the
hooks (session start, every prompt, tool calls), and a marked instruction
block. It reads every file first and refuses (writing nothing) when one is
malformed or holds a foreign entry of the same name; --plan stops there.
Every write goes through files.replace_atomically (to a symlink's target);
unrelated content keeps its bytes. What uninstall needs to give a file back
byte for byte (setup created it, the containers it added, the separator
before a block) is recorded in the state directory's setup.json.

Host formats (checked December 2026): Claude Code hooks in settings.json,
nested event groups, SessionStart / UserPromptSubmit stdout added to the
context, PostToolBatch with the batch's tool calls
(code.claude.com/docs/en/hooks); MCP servers in .mcp.json or ~/.claude.json
(code.claude.com/docs/en/mcp). Cursor: .cursor/mcp.json, .cursor/hooks.json
`{"version": 1, "hooks": {event: [{"command"}]}}` with sessionStart,
postToolUse and beforeSubmitPrompt (cursor.com/docs/hooks). Codex:
config.toml `[mcp_servers.<name>]` and `[[hooks.Event]]` tables, AGENTS.md
(developers.openai.com/codex/hooks, /codex/mcp).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ...errors import Conflict, InvalidInput
from ...files import replace_atomically
from ...paths import state_dir
from ...textsafe import shell_word
from . import HOSTS
from .codex import CodexConfig
from .managed import MARKDOWN, Edit, HooksJson, MarkedBlock, McpServerJson, SetupProblem

MANIFEST = "setup.json"

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
- When a `[thatch]` note says tool interactions are queued for extraction, call `get_extraction_payload` with the
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


def target(host: str, env: Mapping[str, str], cwd: Path, executable: str, *, global_: bool) -> Target:
    if host not in HOSTS:
        from ...suggest import close, did_you_mean

        found = close(host, HOSTS)
        raise InvalidInput(f"unknown host {host!r}{did_you_mean(found)} (the hosts are {', '.join(HOSTS)})",
                           suggestions=found)
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    word = shell_word(executable, exact=True)  # the hosts run it: every character counts
    mcp = [executable, "mcp"]
    if host == "claude":
        hooks = {"SessionStart": f"{word} reminder", "UserPromptSubmit": f"{word} flush-tools",
                 "PostToolBatch": f"{word} buffer-batch"}
        if global_:
            config = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
            state = config / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else home / ".claude.json"
            return Target(host, "global", config, [
                McpServerJson(state, mcp), HooksJson(config / "settings.json", hooks, nested=True),
                MarkedBlock(config / "CLAUDE.md", MARKDOWN, INSTRUCTIONS, "instructions")],
                [f"Claude Code rewrites {state} while it runs: set it up with Claude Code closed"])
        root = project_root(cwd)
        return Target(host, "project", root, [
            McpServerJson(root / ".mcp.json", mcp), HooksJson(root / ".claude" / "settings.json", hooks, nested=True),
            MarkedBlock(root / "CLAUDE.md", MARKDOWN, INSTRUCTIONS, "instructions")],
            ["Claude Code asks once before it starts a project's .mcp.json servers"])
    if host == "cursor":
        hooks = {"sessionStart": f"{word} reminder --json", "postToolUse": f"{word} buffer-tool",
                 "beforeSubmitPrompt": f"{word} flush-tools --json"}
        notes = ["Cursor documents only continue/user_message as beforeSubmitPrompt's output: thatch's prompt"
                 " nudge is sent as additional_context too, which a Cursor that ignores it drops (the session-start"
                 " reminder and the instructions still apply)"]
        if global_:
            config = home / ".cursor"
            return Target(host, "global", config, [McpServerJson(config / "mcp.json", mcp),
                                                   HooksJson(config / "hooks.json", hooks, nested=False)],
                          notes + ["Cursor has no user-wide instruction file: the MCP server's instructions and the"
                                   " session-start reminder tell the agent when to recall and save"])
        root = project_root(cwd)
        return Target(host, "project", root, [
            McpServerJson(root / ".cursor" / "mcp.json", mcp),
            HooksJson(root / ".cursor" / "hooks.json", hooks, nested=False),
            MarkedBlock(root / "AGENTS.md", MARKDOWN, INSTRUCTIONS, "instructions")], notes)
    hooks = {"SessionStart": f"{word} reminder", "UserPromptSubmit": f"{word} flush-tools",
             "PostToolUse": f"{word} buffer-tool"}
    notes = ["Codex runs a hook only after you review and trust it (/hooks in Codex)"]
    if global_:
        config = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        return Target(host, "global", config, [CodexConfig(config / "config.toml", mcp, hooks),
                                               MarkedBlock(config / "AGENTS.md", MARKDOWN, INSTRUCTIONS,
                                                           "instructions")], notes)
    root = project_root(cwd)
    return Target(host, "project", root, [CodexConfig(root / ".codex" / "config.toml", mcp, hooks),
                                          MarkedBlock(root / "AGENTS.md", MARKDOWN, INSTRUCTIONS, "instructions")],
                  notes + ["Codex reads a project's .codex/config.toml only once the project is trusted"])


# -- the manifest ------------------------------------------------------------------------


def _manifest_path(env: Mapping[str, str]) -> Path:
    return state_dir(env) / MANIFEST


def load_manifest(env: Mapping[str, str]) -> dict[str, dict]:
    try:
        data = json.loads(_manifest_path(env).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_manifest(env: Mapping[str, str], manifest: dict[str, dict]) -> None:
    path = _manifest_path(env)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_atomically(path, json.dumps(manifest, indent=2, sort_keys=True) + "\n", 0o600)


# -- plan, install, uninstall ---------------------------------------------------------------


@dataclass
class FileReport:
    path: Path
    role: str
    action: str  # create, update, unchanged, delete, absent
    changes: list[str]

    def to_json(self) -> dict:
        return {"path": str(self.path), "role": self.role, "action": self.action, "changes": self.changes}


@dataclass
class Report:
    host: str
    scope: str
    root: Path
    executable: str
    uninstall: bool
    written: bool
    files: list[FileReport]
    notes: list[str]

    def to_json(self) -> dict:
        return {"host": self.host, "scope": self.scope, "root": str(self.root), "executable": self.executable,
                "action": "uninstall" if self.uninstall else "install", "written": self.written,
                "files": [f.to_json() for f in self.files], "notes": self.notes}


def _read(path: Path) -> str | None:
    try:
        return Path(os.path.realpath(path)).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupProblem(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def run(target: Target, executable: str, env: Mapping[str, str], *, uninstall: bool = False,
        write: bool = True) -> Report:
    """Plan every file's edit; refuse on the first problem; then (unless
    only planning) write them and record what uninstall needs."""
    manifest = load_manifest(env)
    planned: list[tuple[Any, Path, str | None, Edit]] = []
    try:
        for managed in target.files:
            real = Path(os.path.realpath(managed.path))
            text = _read(managed.path)
            if uninstall:
                edit = Edit(None) if text is None else managed.uninstall(text, manifest.get(str(real)))
            else:
                edit = managed.install(text)
            planned.append((managed, real, text, edit))
    except SetupProblem as exc:
        raise Conflict(f"cannot {'remove' if uninstall else 'set up'} {target.host}: {exc}") from None
    reports, emptied = [], []
    try:
        for managed, real, text, edit in planned:
            action = _action(text, edit)
            reports.append(FileReport(managed.path, managed.role, action, edit.changes))
            if write and edit.changed:
                if edit.text is None:
                    emptied += manifest.get(str(real), {}).get("dirs", [])
                try:
                    _write(real, text, edit, manifest, uninstall)
                except OSError as exc:
                    undo = "" if uninstall else f"; 'thatch setup {target.host} --uninstall' undoes what was written"
                    raise Conflict(f"cannot write {managed.path}: {exc.strerror or exc}{undo}") from None
    finally:
        if write:  # even when a later file failed: what was written can still be undone
            save_manifest(env, manifest)
    if write:
        for directory in sorted(set(emptied), key=len, reverse=True):  # the directories setup created, if empty now
            try:
                os.rmdir(directory)
            except OSError:
                pass
    notes = list(target.notes)
    for managed, _real, text, _edit in planned:
        if isinstance(managed, MarkedBlock):
            notes += managed.notes(text)
    return Report(target.host, target.scope, target.root, executable, uninstall, write, reports, notes)


def _action(text: str | None, edit: Edit) -> str:
    if text is None:
        return "create" if edit.changed else "absent"
    if not edit.changed:
        return "unchanged"
    return "delete" if edit.text is None else "update"


def _write(real: Path, before: str | None, edit: Edit, manifest: dict, uninstall: bool) -> None:
    key = str(real)
    if edit.text is None:
        real.unlink()
        manifest.pop(key, None)
        return
    created_dirs = []
    parent = real.parent
    while not parent.exists():
        created_dirs.append(str(parent))
        parent = parent.parent
    real.parent.mkdir(parents=True, exist_ok=True)
    mode = os.stat(real).st_mode & 0o777 if before is not None else 0o644
    replace_atomically(real, edit.text, mode)
    if uninstall:
        manifest.pop(key, None)
    elif edit.facts is not None:
        manifest[key] = _merged(manifest.get(key, {}), {**edit.facts, "dirs": created_dirs})


def _merged(old: dict, new: dict) -> dict:
    """What a later setup learned, added to what an earlier one recorded
    (a file setup created stays created; containers and directories add up)."""
    containers = old.get("containers", []) + [c for c in new.get("containers", []) if c not in old.get("containers", [])]
    return {"created": bool(old.get("created") or new.get("created")), "containers": containers,
            "separator": new.get("separator", old.get("separator")),
            "dirs": sorted(set(old.get("dirs", [])) | set(new.get("dirs", [])), key=len)}


# -- status ------------------------------------------------------------------------------------


def file_state(managed: Any) -> tuple[str, str]:
    """(state, detail) of one file: ok, outdated, missing, absent or malformed."""
    try:
        text = _read(managed.path)
        if text is None:
            return "absent", ""
        edit = managed.install(text)
        if not edit.changed:
            return "ok", ""
        if managed.present(text):
            return "outdated", "; ".join(edit.changes)
        return "missing", ""
    except SetupProblem as exc:
        return "malformed", str(exc)


def status(env: Mapping[str, str], cwd: Path, executable: str, hosts: tuple[str, ...] = HOSTS) -> list[dict]:
    found = []
    for host in hosts:
        for global_ in (False, True):
            where = target(host, env, cwd, executable, global_=global_)
            files = [{"path": str(m.path), "role": m.role, **dict(zip(("state", "detail"), file_state(m)))}
                     for m in where.files]
            states = {f["state"] for f in files}
            if states == {"ok"}:
                overall = "wired"
            elif states <= {"absent", "missing"}:
                overall = "not wired"
            elif states <= {"ok", "outdated"}:
                overall = "drifted"
            else:
                overall = "partial"
            found.append({"host": host, "scope": where.scope, "state": overall, "files": files})
    return found
