"""Codex's config.toml: thatch's MCP server and hooks as one marked block
of TOML tables, rendered with tomlkit and appended after whatever the file
holds (comments, layout and every other table stay byte for byte).

Codex reads hooks from inline `[hooks]` tables of config.toml as well as
from hooks.json (developers.openai.com/codex/hooks): `[[hooks.Event]]` is
one matcher group and `[[hooks.Event.hooks]]` one handler. Appending such
tables is valid TOML after any existing `[hooks]` or `[mcp_servers]`
table; an inline table (`hooks = {...}`) cannot be extended, which the
check below reports instead of writing a broken file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .managed import HOOK_COMMANDS, TOML, MarkedBlock, SetupProblem, runs_thatch


def _toml(value: Any) -> str:
    import tomlkit

    return tomlkit.item(value).as_string()


def render(command: list[str], hooks: dict[str, str]) -> str:
    lines = ["[mcp_servers.thatch]", f"command = {_toml(command[0])}", f"args = {_toml(command[1:])}"]
    for event, hook in hooks.items():
        lines += ["", f"[[hooks.{event}]]", f"[[hooks.{event}.hooks]]", 'type = "command"', f"command = {_toml(hook)}"]
    return "\n".join(lines) + "\n"


def load(path: Path, text: str) -> dict:
    import tomlkit

    try:
        return tomlkit.parse(text).unwrap()
    except Exception as exc:  # tomlkit raises its own ParseError subclasses
        raise SetupProblem(f"{path} is not valid TOML ({exc}); fix or move it, then run setup again") from None


def hook_commands(config: dict, event: str) -> list[str]:
    hooks = config.get("hooks")
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    return [h.get("command") for g in (groups if isinstance(groups, list) else []) if isinstance(g, dict)
            for h in (g.get("hooks") if isinstance(g.get("hooks"), list) else []) if isinstance(h, dict)]


class CodexConfig(MarkedBlock):
    def __init__(self, path: Path, command: list[str], hooks: dict[str, str]) -> None:
        super().__init__(path, TOML, render(command, hooks), "MCP server and hooks")
        self.command, self.hooks = command, hooks

    def check(self, text: str, new: str) -> None:
        found = self.markers.find(text)
        outside = load(self.path, text if found is None else text[:found[0]] + text[found[1]:])
        servers = outside.get("mcp_servers")
        if isinstance(servers, dict) and "thatch" in servers:
            raise SetupProblem(f"{self.path} already defines mcp_servers.thatch outside thatch's block (from"
                               " `codex mcp add`, say); remove that table, then run setup again")
        for event in self.hooks:
            if any(runs_thatch(c, HOOK_COMMANDS) for c in hook_commands(outside, event)):
                raise SetupProblem(f"{self.path} already has a thatch {event} hook outside thatch's block;"
                                   " remove it, then run setup again")
        try:
            import tomlkit

            result = tomlkit.parse(new).unwrap()
        except Exception as exc:
            raise SetupProblem(f"{self.path}: thatch's tables cannot be added to this file ({exc}); `hooks` and"
                               " `mcp_servers` (and their events) must be written as [tables], not as inline"
                               " tables, arrays or values") from None
        servers = result.get("mcp_servers")
        server = (servers.get("thatch") if isinstance(servers, dict) else None) or {}
        server = server if isinstance(server, dict) else {}
        if [server.get("command"), *(server.get("args") or [])] != self.command or any(
                hook not in hook_commands(result, event) for event, hook in self.hooks.items()):
            raise SetupProblem(f"{self.path}: thatch's tables would not take effect in this file; check its"
                               " [mcp_servers] and [hooks] tables")

    def notes(self, text: str | None) -> list[str]:
        """What keeps the hooks from running, as far as the file tells (not the Markdown note)."""
        if not text:
            return []
        features = (load(self.path, text).get("features") or {})
        if features.get("hooks") is False or features.get("codex_hooks") is False:
            return [f"{self.path} turns hooks off ([features] hooks = false): Codex will not run thatch's hooks"]
        return []
