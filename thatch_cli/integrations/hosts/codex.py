"""Codex's config.toml: thatch's MCP server (`[mcp_servers.thatch]`, its
`env` table) and one handler per hook event (`[[hooks.Event]]` with
`[[hooks.Event.hooks]]`), edited section by section (tomlsections.py).

Codex rewrites this file itself: `codex mcp add` regroups the
`[mcp_servers.*]` tables and drops comments between them, and trusting a
hook in /hooks (its app server's `config/batchWrite`) adds
`[hooks.state."FILE:event:GROUP:HANDLER"]` tables, keyed by the hook's
position. So thatch's entries are found by what they are (a server or a
handler that runs a `thatch` executable with thatch's arguments), wherever
they are now; an entry is updated in place (its position, hence its trust
key, stays); missing ones are appended; uninstall removes exactly those
sections. Nothing else is touched: not the trust tables, not other servers
or hooks, not a comment. Every edit is checked by meaning: the file parsed
after the edit must equal the file before it with only thatch's entries
changed, or nothing is written.

Codex reads hooks from `[hooks]` tables of config.toml
(developers.openai.com/codex/hooks); an inline table or array (`hooks =
{...}`, `SessionStart = [...]`) cannot be extended by a section, which is
refused with what to change. In the user's own config the server is
`required = true`: Codex then waits for it at session start (`codex exec`
starts its first turn without an optional server that is still starting).
A project's file is the team's: there the server runs through the guard,
is optional (a teammate without thatch still gets a Codex), and forwards
thatch's variables by name (`env_vars`) instead of holding their values.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from . import tomlsections
from .managed import HOOK_COMMANDS, Edit, SetupProblem, runs_thatch

# The block markers older versions of `thatch setup codex` wrote around their tables.
LEGACY_MARKERS = ("# BEGIN thatch", "# END thatch")


def _toml(value: Any) -> str:
    import tomlkit

    return tomlkit.item(value).as_string()


def load(path: Path, text: str) -> dict:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SetupProblem(f"{path} is not valid TOML ({exc}); fix or move it, then run setup again") from None
    except RecursionError:
        raise SetupProblem(f"{path} is nested too deeply to be Codex's configuration; fix or move it, then run"
                           " setup again") from None


def _server_runs_thatch(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("command"), str):
        return False
    import shlex

    args = _list(value, "args")
    return runs_thatch(shlex.join([value["command"], *[str(a) for a in args]]), ("mcp",))


def _table(config: dict, key: str) -> dict:
    """config[key] when it is a table, else an empty one."""
    value = config.get(key)
    return value if isinstance(value, dict) else {}


def _list(config: dict, key: str) -> list:
    """config[key] when it is an array, else an empty one."""
    value = config.get(key)
    return value if isinstance(value, list) else []


def _handler_is_ours(value: Any) -> bool:
    return isinstance(value, dict) and runs_thatch(value.get("command"), HOOK_COMMANDS)


def without_thatch(config: dict) -> dict:
    """`config` with thatch's server and hook handlers taken out (and the
    containers that held only them): what must not change."""
    config = copy.deepcopy(config)
    servers = config.get("mcp_servers")
    if isinstance(servers, dict):
        for name in [n for n, v in servers.items() if _server_runs_thatch(v)]:
            del servers[name]
        if not servers:
            del config["mcp_servers"]
    hooks = config.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if event == "state" or not isinstance(groups, list):
                continue
            kept = []
            for group in groups:
                handlers = group.get("hooks") if isinstance(group, dict) else None
                if isinstance(handlers, list) and any(_handler_is_ours(h) for h in handlers):
                    handlers = [h for h in handlers if not _handler_is_ours(h)]
                    if not handlers:
                        continue
                    group = {**group, "hooks": handlers}
                kept.append(group)
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
        if not hooks:
            del config["hooks"]
    return config


class CodexConfig:
    role = "mcp and hooks"

    def __init__(self, path: Path, command: list[str], hooks: dict[str, str], *, env: dict[str, str] | None = None,
                 timeout: int = 10, required: bool = True, forward: tuple[str, ...] = ()) -> None:
        self.path, self.command, self.hooks = path, command, hooks
        self.env, self.timeout = dict(env or {}), timeout
        self.required, self.forward = required, list(forward)

    # -- what thatch writes -----------------------------------------------------------

    def server(self) -> dict:
        server: dict[str, Any] = {"command": self.command[0], "args": self.command[1:]}
        if self.required:
            server["required"] = True
        if self.forward:
            server["env_vars"] = list(self.forward)
        if self.env:
            server["env"] = dict(self.env)
        return server

    def handler(self, event: str) -> dict:
        return {"type": "command", "command": self.hooks[event], "timeout": self.timeout}

    def _render_server(self, name: str = "thatch") -> str:
        server = self.server()
        lines = [f"[mcp_servers.{_key(name)}]", f"command = {_toml(server['command'])}",
                 f"args = {_toml(server['args'])}"]
        lines += ["required = true"] if self.required else []
        lines += [f"env_vars = {_toml(self.forward)}"] if self.forward else []
        if self.env:
            lines += ["", f"[mcp_servers.{_key(name)}.env]"]
            lines += [f"{_key(k)} = {_toml(v)}" for k, v in sorted(self.env.items())]
        return "\n".join(lines) + "\n"

    def _render_handler(self, event: str) -> str:
        handler = self.handler(event)
        return (f"[[hooks.{event}.hooks]]\ntype = \"command\"\ncommand = {_toml(handler['command'])}\n"
                f"timeout = {handler['timeout']}\n")

    # -- where thatch's entries are -------------------------------------------------------

    def _find(self, text: str, config: dict) -> dict:
        """thatch's sections: {"servers": {name: [Section...]}, "handlers": {event: [(Section, group Section,
        handlers in that group)]}}; SetupProblem for what cannot be edited section by section."""
        found: dict[str, Any] = {"servers": {}, "handlers": {}}
        all_sections = tomlsections.sections(text)
        servers = _table(config, "mcp_servers")
        for name, value in servers.items():
            if not _server_runs_thatch(value):
                continue
            mine = [s for s in all_sections if s.path[:2] == ("mcp_servers", name)]
            if not any(s.path == ("mcp_servers", name) for s in mine):
                raise SetupProblem(f"{self.path}: the MCP server {name!r} that runs thatch is written inline; make it"
                                   f" a [mcp_servers.{name}] table (or remove it), then run setup again")
            found["servers"][name] = mine
        hooks = _table(config, "hooks")
        for event in {*self.hooks, *[e for e in hooks if e != "state"]}:
            group: Any = None
            members: list[Any] = []
            listed = []
            for section in all_sections:
                if section.path == ("hooks", event) and section.array:
                    group, members = section, []
                elif section.path == ("hooks", event, "hooks") and section.array and group is not None:
                    members.append(section)
                    listed.append((section, group, members))
            ours = [(s, g, m) for s, g, m in listed if _handler_is_ours(_body(text, s))]
            groups = [g for g in _list(hooks, event) if isinstance(g, dict)]
            counted = sum(len(g.get("hooks") or []) for g in groups)
            if any(_handler_is_ours(h) for g in groups for h in (g.get("hooks") or [])) and len(listed) != counted:
                raise SetupProblem(f"{self.path}: the {event} hooks are written inline; write them as [[hooks.{event}]]"
                                   " tables (or remove thatch's), then run setup again")
            if ours:
                found["handlers"][event] = ours
        return found

    # -- edits --------------------------------------------------------------------------------

    def install(self, text: str | None) -> Edit:
        current = text or ""
        config = load(self.path, current)
        self._check_foreign(config)
        found = self._find(current, config)
        splices: list[tuple[int, int, str]] = []
        changes: list[str] = []
        appended: list[str] = []
        servers = found["servers"]
        if servers:
            name = "thatch" if "thatch" in servers else sorted(servers)[0]
            if config["mcp_servers"][name] != self.server():
                splices += _replace_all(current, servers[name], self._render_server(name))
                changes.append("update thatch's MCP server")
            for other in sorted(set(servers) - {name}):
                splices += [(s.start, s.end, "") for s in servers[other]]
                changes.append(f"remove the second MCP server running thatch ({other})")
        else:
            if isinstance(config.get("mcp_servers"), dict) and "thatch" in config["mcp_servers"]:
                raise AssertionError("checked by _check_foreign")
            appended.append(self._render_server())
            changes.append("add thatch's MCP server")
        for event in self.hooks:
            ours = found["handlers"].get(event, [])
            if ours:
                first, _group, _members = ours[0]
                if _body(current, first) != self.handler(event):
                    splices.append(_replace(current, first, self._render_handler(event)))
                    changes.append(f"update the {event} hook: {self.hooks[event]}")
                for extra, group, members in ours[1:]:
                    alone = all(_handler_is_ours(_body(current, m)) for m in members)
                    splices += [(group.start, group.end, "")] if alone and members[0] is extra else []
                    splices.append((extra.start, extra.end, ""))
                changes += [f"remove a second thatch {event} hook"] * (len(ours) - 1)
            else:
                appended.append(f"[[hooks.{event}]]\n" + self._render_handler(event))
                changes.append(f"add the {event} hook: {self.hooks[event]}")
        legacy = _legacy_marker_lines(current)
        if not changes and not legacy:
            return Edit(current)
        new = _splice(current, splices + legacy)
        separator = None
        if appended:
            from .blocks import separator as blank_line

            separator = blank_line(new)
            new = new + separator + "\n".join(appended)
        self._verify(config, new, installed=True)
        facts = {"created": text is None, "separator": separator} if appended else None
        return Edit(new, changes or ["remove the old thatch block markers"], facts)

    def uninstall(self, text: str, facts: dict | None) -> Edit:
        config = load(self.path, text)
        found = self._find(text, config)
        splices: list[tuple[int, int, str]] = []
        changes = []
        for name, sections in found["servers"].items():
            splices += [(s.start, s.end, "") for s in sections]
            changes.append("remove thatch's MCP server" + (f" ({name})" if name != "thatch" else ""))
        for event, ours in found["handlers"].items():
            groups_done = set()
            for section, group, members in ours:
                splices.append((section.start, section.end, ""))
                if group.start not in groups_done and all(_handler_is_ours(_body(text, m)) for m in members):
                    splices.append((group.start, group.end, ""))
                    groups_done.add(group.start)
            changes.append(f"remove the {event} hook")
        legacy = _legacy_marker_lines(text)
        if not changes and not legacy:
            return Edit(text)
        new = _splice(text, splices + legacy)
        if any(end == len(text) for _start, end, _new in splices):
            new = _trim_end(new, (facts or {}).get("separator"))
        self._verify(config, new, installed=False)
        if facts and facts.get("created") and not new.strip():
            return Edit(None, changes + ["delete the file setup created"])
        return Edit(new, changes or ["remove the old thatch block markers"])

    def present(self, text: str) -> bool:
        config = load(self.path, text)
        found = self._find(text, config)
        return bool(found["servers"] or found["handlers"])

    def state(self, text: str) -> tuple[str, str]:
        """(state, detail) beyond install's plan: `rewritten` when thatch's
        entries are what setup writes but not as it wrote them (Codex
        reformatted or regrouped them); `foreign` for a server named thatch
        that runs something else."""
        config = load(self.path, text)
        servers = _table(config, "mcp_servers")
        if "thatch" in servers and not _server_runs_thatch(servers["thatch"]):
            return "foreign", "an MCP server named thatch that does not run `thatch mcp` (someone else's)"
        found = self._find(text, config)
        written = [_strip(s.text(text)) for sections in found["servers"].values() for s in sections]
        written += [_strip(s.text(text)) for ours in found["handlers"].values() for s, _g, _m in ours]
        expected = _strip(self._render_server()).split("\n\n") + [_strip(self._render_handler(e)) for e in self.hooks]
        if sorted(written) != sorted(expected) or _legacy_marker_lines(text):
            return "rewritten", "thatch's entries are there, rewritten by Codex (setup leaves them in place)"
        return "ok", ""

    def _check_foreign(self, config: dict) -> None:
        servers = config.get("mcp_servers")
        if isinstance(servers, dict) and "thatch" in servers and not _server_runs_thatch(servers["thatch"]):
            raise SetupProblem(f"{self.path} already has an MCP server named thatch that does not run `thatch mcp`"
                               " (someone else's); rename or remove it, then run setup again")

    def _verify(self, before: dict, text: str, *, installed: bool) -> None:
        """The edit changed exactly thatch's entries, or SetupProblem."""
        import tomllib

        try:
            after = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SetupProblem(f"{self.path}: thatch's tables cannot be added to this file ({exc}); `hooks` and"
                               " `mcp_servers` (and their events) must be written as [tables], not as inline"
                               " tables, arrays or values") from None
        same_rest = without_thatch(after) == without_thatch(before)
        servers = {n: v for n, v in (after.get("mcp_servers") or {}).items() if _server_runs_thatch(v)}
        handlers = {event: [h for g in ((after.get("hooks") or {}).get(event) or []) for h in g.get("hooks") or []
                            if _handler_is_ours(h)] for event in self.hooks}
        if installed:
            ours = list(servers.values()) == [self.server()] and all(
                handlers[e] == [self.handler(e)] for e in self.hooks)
        else:
            ours = not servers and not any(handlers.values())
        if not (same_rest and ours):
            raise SetupProblem(f"{self.path}: thatch could not edit its tables without touching others (the file's"
                               " layout is unusual); edit it by hand, or move it away and run setup again")

    def notes(self, text: str | None) -> list[str]:
        """What keeps the hooks from running, as far as the file tells."""
        if not text:
            return []
        features = (load(self.path, text).get("features") or {})
        if features.get("hooks") is False or features.get("codex_hooks") is False:
            return [f"{self.path} turns hooks off ([features] hooks = false): Codex will not run thatch's hooks"]
        return []


def _key(name: str) -> str:
    return name if tomlsections.parse_key(name) == (name,) and "." not in name else _toml(name)


def _body(text: str, section: tomlsections.Section) -> dict:
    """The keys of one section, read alone."""
    import tomllib

    lines = section.text(text).split("\n", 1)
    try:
        return tomllib.loads(lines[1] if len(lines) > 1 else "")
    except tomllib.TOMLDecodeError:
        return {}


def _strip(text: str) -> str:
    return "\n".join(line for line in text.strip().splitlines() if not line.startswith(LEGACY_MARKERS))


def _replace(text: str, section: tomlsections.Section, new: str) -> tuple[int, int, str]:
    """Replace a section's lines, keeping the blank lines that follow them."""
    body = section.text(text)
    kept = len(body.rstrip("\r\n \t"))
    trailing = body[kept:]
    trailing = trailing[trailing.find("\n") + 1:] if "\n" in trailing else ""
    return section.start, section.end, new + trailing


def _replace_all(text: str, sections: list, new: str) -> list[tuple[int, int, str]]:
    """The first section becomes `new` (a server with its env table), the others go."""
    first, *rest = sorted(sections, key=lambda s: s.start)
    return [_replace(text, first, new), *[(s.start, s.end, "") for s in rest]]


def _legacy_marker_lines(text: str) -> list[tuple[int, int, str]]:
    found, offset = [], 0
    for line in text.splitlines(keepends=True):
        if line.startswith(LEGACY_MARKERS):
            found.append((offset, offset + len(line), ""))
        offset += len(line)
    return found


def _splice(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply non-overlapping (start, end, replacement) edits; a span inside another is dropped."""
    result, position = [], 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], -e[1])):
        if start < position:
            continue
        result += [text[position:start], new]
        position = end
    return "".join(result) + text[position:]


def _trim_end(text: str, separator: str | None) -> str:
    """After thatch's sections at the end of the file were removed: the
    separator setup added before them goes too (when it is known), else the
    blank lines left at the end."""
    if separator is not None:
        return text[: len(text) - len(separator)] if separator and text.endswith(separator) else text
    while text.endswith("\n\n"):
        text = text[:-1]
    return text
