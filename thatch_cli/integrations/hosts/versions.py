"""Which version of a host is installed, and what that version accepts.

Claude Code validates its settings files: before 2.1.110 `PostToolBatch`
is "Invalid key in record", and Claude Code then ignores the whole project
settings file (the user's own hooks, permissions and model with it). So
setup asks `claude --version` and writes `PostToolBatch` (one hook run per
batch of tool calls) only from 2.1.110, `PostToolUse` (one per call,
accepted by every version) otherwise, and says which. `--status` warns when
the installed host is older than what the files hold.

The minimum versions are those the real-host tests run (tests/hosts/).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Mapping

MINIMUM = {"claude": (2, 1, 48), "codex": (0, 171, 0)}
CLAUDE_POST_TOOL_BATCH = (2, 1, 110)
_COMMANDS = {"claude": "claude", "codex": "codex"}
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def text(version: tuple[int, ...] | None) -> str:
    return ".".join(map(str, version)) if version else "unknown"


def installed(host: str, env: Mapping[str, str]) -> tuple[int, ...] | None:
    """The version `HOST --version` prints (the first on the user's PATH), None when it cannot be run."""
    name = _COMMANDS.get(host)
    program = shutil.which(name, path=env.get("PATH") or os.defpath) if name else None
    if program is None:
        return None
    try:
        done = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=30,
                              env=dict(env), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    found = _VERSION.search(done.stdout or "")
    return tuple(int(part) for part in found.groups()) if found else None


def claude_tool_event(version: tuple[int, ...] | None) -> tuple[str, str, str]:
    """(event, hook command, why) for Claude Code's tool-call hook."""
    if version is not None and version >= CLAUDE_POST_TOOL_BATCH:
        return "PostToolBatch", "buffer-batch", f"Claude Code {text(version)}: PostToolBatch (one run per batch)"
    if version is None:
        why = (f"claude not found on PATH: PostToolUse, which every Claude Code accepts (run setup again after"
               f" installing Claude Code {text(CLAUDE_POST_TOOL_BATCH)}+ for PostToolBatch)")
    else:
        why = f"Claude Code {text(version)} is older than {text(CLAUDE_POST_TOOL_BATCH)}: PostToolUse, not PostToolBatch"
    return "PostToolUse", "buffer-tool", why


def warnings(host: str, env: Mapping[str, str], events: set[str]) -> list[str]:
    """What the installed host cannot read of what the files hold, or an untested old version."""
    if host not in _COMMANDS:
        return []
    version = installed(host, env)
    if version is None:
        return []
    found = []
    if host == "claude" and "PostToolBatch" in events and version < CLAUDE_POST_TOOL_BATCH:
        found.append(f"Claude Code {text(version)} rejects PostToolBatch (needs {text(CLAUDE_POST_TOOL_BATCH)}) and"
                     " then ignores the whole settings file: run `thatch setup claude` again")
    if version < MINIMUM[host]:
        found.append(f"{host} {text(version)} is older than {text(MINIMUM[host])}, the oldest thatch is tested with")
    return found
