"""The kinds of file `thatch setup` edits, each knowing what thatch owns in
it: an MCP server entry in a JSON file, hook entries in a JSON file (Claude
Code's nested groups or Cursor's flat list), a marked instruction block in
Markdown, a marked block of tables in a Codex config.toml.

Each kind computes an Edit from the file's current text (None when absent)
and never writes; setup.py decides, checks everything first, then writes.
`facts` are what uninstall needs to give the file back byte for byte (did
setup create the file, which containers, which separator).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import blocks, jsonedit

# The hook commands, as the original thatch named them.
HOOK_COMMANDS = ("reminder", "flush-tools", "buffer-batch", "buffer-tool", "flush-predictions")


class SetupProblem(Exception):
    """A file setup cannot edit safely (malformed, or holding a foreign
    entry of the same name); nothing is written when one is found."""


@dataclass
class Edit:
    text: str | None  # the new text; None: delete the file
    changes: list[str] = field(default_factory=list)
    facts: dict[str, Any] | None = None  # for uninstall; None: keep what was recorded
    keep: bool = False  # said, not done (a shared block another host still uses)

    @property
    def changed(self) -> bool:
        return bool(self.changes)


def runs_thatch(command: Any, subcommands: tuple[str, ...]) -> bool:
    """Whether a shell command line runs a thatch executable with one of
    `subcommands` (thatch's own hook commands, whoever installed them)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if words[:2] == ["sh", "-c"] and len(words) == 3 and words[2].startswith(GUARD):
        try:
            words = ["thatch", *shlex.split(words[2][len(GUARD):])]
        except ValueError:
            return False
    return (len(words) >= 2 and os.path.basename(words[0]).startswith("thatch")
            and words[1] in subcommands)


# The shell words that run thatch from a file a team shares: THATCH_BIN
# (each user's own settings) or `thatch` on PATH; where neither exists the
# command exits 0 in silence, so a teammate without thatch sees no error.
# No `${...}`: Claude Code expands those in .mcp.json itself, before the
# `env` of its settings applies, so THATCH_BIN would never be seen.
GUARD = 't="$THATCH_BIN"; [ -n "$t" ] || t=thatch; command -v "$t" >/dev/null 2>&1 || exit 0; exec "$t" '


def guarded(arguments: str) -> str:
    """A command line for a shared file that runs `thatch <arguments>` when thatch is there."""
    return shlex.join(["sh", "-c", GUARD + arguments])


def _parse_json(path: Path, text: str) -> jsonedit.Node:
    try:
        return jsonedit.parse(text)
    except jsonedit.Malformed as exc:
        raise SetupProblem(f"{path} is not valid JSON ({exc}); fix or move it, then run setup again") from None
    except RecursionError:  # thousands of nested brackets: no host config is shaped so
        raise SetupProblem(f"{path} is nested too deeply to be a host's configuration; fix or move it, then run"
                           " setup again") from None


def _container(path: Path, root: jsonedit.Node, keys: tuple, kind: str) -> jsonedit.Node | None:
    node = jsonedit.find(root, keys)
    if node is not None and node.kind != kind:
        where = ".".join(map(str, keys))
        raise SetupProblem(f"{path}: {where} is not a JSON {kind}; fix or move the file, then run setup again")
    return node


def _prune(text: str, keys: tuple, facts: dict | None) -> str:
    """Remove the containers at `keys` and above that are empty now and
    that setup created (all of them when nothing was recorded)."""
    created = [tuple(c) for c in facts.get("containers", [])] if facts else None
    for depth in range(len(keys), 0, -1):
        path = keys[:depth]
        node = jsonedit.find(jsonedit.parse(text), path)
        if node is None or node.members or node.items or node.kind == "scalar":
            break
        if created is not None and path not in created:
            break
        text = jsonedit.remove_member(text, path[:-1], path[-1])
    return text


def _finish(text: str, facts: dict | None, empty: dict) -> str | None:
    """None (delete the file) when setup created it and nothing else is left in it."""
    if facts and facts.get("created") and jsonedit.plain(jsonedit.parse(text)) == empty:
        return None
    return text


class McpServerJson:
    """`mcpServers.thatch` in a JSON config (Claude Code, Cursor)."""

    role = "mcp"

    def __init__(self, path: Path, command: list[str], env: dict[str, str] | None = None) -> None:
        self.path = path
        self.entry: dict[str, Any] = {"command": command[0], "args": command[1:]}
        if env:
            self.entry["env"] = dict(env)

    def _is_thatch(self, value: Any) -> bool:
        return (isinstance(value, dict) and runs_thatch(shlex.join([str(value.get("command", ""))]
                                                                   + [str(a) for a in value.get("args") or []]),
                                                        ("mcp",)))

    def install(self, text: str | None) -> Edit:
        created, text = text is None, text if text is not None else "{}\n"
        root = _parse_json(self.path, text)
        servers = _container(self.path, root, ("mcpServers",), "object")
        if servers is None:
            text = jsonedit.add_member(text, (), "mcpServers", {"thatch": self.entry})
            return Edit(text, ["add the thatch MCP server"], {"created": created, "containers": [["mcpServers"]]})
        current = jsonedit.find(servers, ("thatch",))
        if current is None:
            text = jsonedit.add_member(text, ("mcpServers",), "thatch", self.entry)
            return Edit(text, ["add the thatch MCP server"], {"created": created, "containers": []})
        value = jsonedit.plain(current)
        if value == self.entry:
            return Edit(text)
        if not self._is_thatch(value):
            raise SetupProblem(f"{self.path} already has an MCP server named thatch that does not run"
                               " `thatch mcp` (someone else's); rename or remove it, then run setup again")
        text = jsonedit.remove_member(text, ("mcpServers",), "thatch")
        text = jsonedit.add_member(text, ("mcpServers",), "thatch", self.entry)
        return Edit(text, [f"update the thatch MCP server (was: {shlex.join([str(value.get('command'))])} ...)"])

    def present(self, text: str) -> bool:
        node = jsonedit.find(jsonedit.parse(text), ("mcpServers", "thatch"))
        return node is not None and self._is_thatch(jsonedit.plain(node))

    def state(self, text: str) -> tuple[str, str] | None:
        """`foreign` for a server named thatch that runs something else (someone else's)."""
        node = jsonedit.find(_parse_json(self.path, text), ("mcpServers", "thatch"))
        if node is not None and not self._is_thatch(jsonedit.plain(node)):
            return "foreign", "an MCP server named thatch that does not run `thatch mcp` (someone else's)"
        return None

    def uninstall(self, text: str, facts: dict | None) -> Edit:
        root = _parse_json(self.path, text)
        current = jsonedit.find(root, ("mcpServers", "thatch"))
        if current is None or not self._is_thatch(jsonedit.plain(current)):
            return Edit(text)
        text = _prune(jsonedit.remove_member(text, ("mcpServers",), "thatch"), ("mcpServers",), facts)
        return Edit(_finish(text, facts, {}), ["remove the thatch MCP server"])


class HooksJson:
    """thatch's hook entries in a JSON hooks file: Claude Code's nested
    `{"hooks": {Event: [{"hooks": [{"type": "command", "command"}]}]}}` or
    Cursor's flat `{"version": 1, "hooks": {event: [{"command"}]}}`."""

    role = "hooks"

    def __init__(self, path: Path, commands: dict[str, str], *, nested: bool, timeout: int | None = None,
                 retired: tuple[str, ...] = ()) -> None:
        self.path, self.commands, self.nested, self.timeout = path, commands, nested, timeout
        self.retired = retired  # events an earlier setup may have used: thatch's hooks there are removed
        self.empty: dict = {} if nested else {"version": 1}

    def entry(self, command: str) -> dict:
        if not self.nested:
            return {"command": command}
        handler: dict[str, Any] = {"type": "command", "command": command}
        if self.timeout is not None:
            handler["timeout"] = self.timeout
        return {"hooks": [handler]}

    def _ours(self, root: jsonedit.Node, event: str) -> list[tuple[int, int | None]]:
        """(entry index, handler index within a nested group) of every thatch hook of `event`."""
        found: list[tuple[int, int | None]] = []
        array = jsonedit.find(root, ("hooks", event))
        for i, item in enumerate(array.items if array is not None and array.kind == "array" else []):
            value = jsonedit.plain(item)
            if not isinstance(value, dict):
                continue
            if not self.nested:
                if runs_thatch(value.get("command"), HOOK_COMMANDS):
                    found.append((i, None))
                continue
            handlers = value["hooks"] if isinstance(value.get("hooks"), list) else []
            found += [(i, j) for j, h in enumerate(handlers)
                      if isinstance(h, dict) and runs_thatch(h.get("command"), HOOK_COMMANDS)]
        return found

    def _remove_ours(self, text: str, event: str) -> str:
        for i, j in reversed(self._ours(jsonedit.parse(text), event)):
            if j is None:
                text = jsonedit.remove_item(text, ("hooks", event), i)
                continue
            text = jsonedit.remove_item(text, ("hooks", event, i, "hooks"), j)
            if not jsonedit.plain(jsonedit.at(jsonedit.parse(text), ("hooks", event, i, "hooks"))):
                text = jsonedit.remove_item(text, ("hooks", event), i)
        return text

    def install(self, text: str | None) -> Edit:
        created, text = text is None, text if text is not None else _initial(self.empty)
        root = _parse_json(self.path, text)
        changes, containers = [], []
        if _container(self.path, root, ("hooks",), "object") is None:
            text = jsonedit.add_member(text, (), "hooks", {})
            containers.append(["hooks"])
        for event in self.retired:
            if self._ours(jsonedit.parse(text), event):
                text = self._remove_ours(text, event)
                if not jsonedit.plain(jsonedit.at(jsonedit.parse(text), ("hooks", event))):
                    text = jsonedit.remove_member(text, ("hooks",), event)
                changes.append(f"remove the {event} hook (replaced)")
        for event, command in self.commands.items():
            root = jsonedit.parse(text)
            array = _container(self.path, root, ("hooks", event), "array")
            if array is None:
                text = jsonedit.add_member(text, ("hooks",), event, [self.entry(command)])
                containers.append(["hooks", event])
                changes.append(f"add the {event} hook: {command}")
                continue
            ours = self._ours(root, event)
            if len(ours) == 1 and jsonedit.plain(array.items[ours[0][0]]) == self.entry(command):
                continue
            text = jsonedit.append_item(self._remove_ours(text, event), ("hooks", event), self.entry(command))
            changes.append(f"{'replace' if ours else 'add'} the {event} hook: {command}")
        if not changes:
            return Edit(text)
        return Edit(text, changes, {"created": created, "containers": containers})

    def present(self, text: str) -> bool:
        root = jsonedit.parse(text)
        return any(self._ours(root, event) for event in (*self.commands, *self.retired))

    def events(self, text: str) -> set[str]:
        """The events thatch's hooks are registered for in this file."""
        root = _parse_json(self.path, text)
        hooks = jsonedit.find(root, ("hooks",))
        names = [m.key for m in hooks.members] if hooks is not None and hooks.kind == "object" else []
        return {name for name in names if self._ours(root, name)}

    def uninstall(self, text: str, facts: dict | None) -> Edit:
        _parse_json(self.path, text)
        changes = []
        for event in (*self.commands, *self.retired):
            if self._ours(jsonedit.parse(text), event):
                text = _prune(self._remove_ours(text, event), ("hooks", event), facts)
                changes.append(f"remove the {event} hook")
        if not changes:
            return Edit(text)
        return Edit(_finish(text, facts, self.empty), changes)


class EnvJson:
    """thatch's variables in the `env` object of a host's per-user settings
    file (Claude Code's .claude/settings.local.json): what is particular to
    this machine, kept out of the files a team shares. Setup owns the
    variables named in `owned`; an empty `values` removes them."""

    role = "env"

    def __init__(self, path: Path, values: dict[str, str], owned: tuple[str, ...]) -> None:
        self.path, self.values, self.owned = path, values, tuple(dict.fromkeys((*values, *owned)))

    def _ours(self, text: str) -> dict[str, Any]:
        node = _container(self.path, _parse_json(self.path, text), ("env",), "object")
        current = jsonedit.plain(node) if node is not None else {}
        return {k: v for k, v in current.items() if k in self.owned}

    def install(self, text: str | None) -> Edit:
        if text is None and not self.values:
            return Edit(None)
        created, text = text is None, text if text is not None else "{}\n"
        current, changes = self._ours(text), []
        if jsonedit.find(jsonedit.parse(text), ("env",)) is None:
            text = jsonedit.add_member(text, (), "env", dict(self.values))
            return Edit(text, [f"set {k}={v}" for k, v in self.values.items()],
                        {"created": created, "containers": [["env"]]})
        for key in current:
            if key not in self.values:
                text = jsonedit.remove_member(text, ("env",), key)
                changes.append(f"remove {key}")
        for key, value in self.values.items():
            if current.get(key) == value:
                continue
            if key in current:
                text = jsonedit.remove_member(text, ("env",), key)
            text = jsonedit.add_member(text, ("env",), key, value)
            changes.append(f"set {key}={value}")
        if not changes:
            return Edit(text)
        return Edit(text, changes, {"created": created, "containers": []})

    def present(self, text: str) -> bool:
        return bool(self._ours(text))

    def state(self, text: str) -> tuple[str, str] | None:
        return None if self.values or self._ours(text) else ("ok", "nothing particular to this machine")

    def uninstall(self, text: str, facts: dict | None) -> Edit:
        current = self._ours(text)
        if not current:
            return Edit(text)
        for key in current:
            text = jsonedit.remove_member(text, ("env",), key)
        text = _prune(text, ("env",), facts)
        return Edit(_finish(text, facts, {}), [f"remove {key}" for key in current])


def _initial(value: dict) -> str:
    return jsonedit.render(value, "", "  ", False) + "\n"


class MarkedBlock:
    """A block between marker lines: instructions in Markdown, tables in TOML."""

    def __init__(self, path: Path, markers: blocks.Markers, body: str, role: str) -> None:
        self.path, self.markers, self.body, self.role = path, markers, body, role
        self.shared_with: tuple[str, ...] = ()  # other hosts reading the same file (AGENTS.md)

    def check(self, text: str, new: str) -> None:
        """Refuse an edit that would break the file (overridden for TOML)."""

    def install(self, text: str | None) -> Edit:
        current = text if text is not None else ""
        try:
            new, added = blocks.put(current, self.markers, self.body)
        except blocks.Broken as exc:
            raise SetupProblem(f"{self.path}: {exc}; restore the end marker or delete the block, then run setup"
                               " again") from None
        self.check(current, new)
        if new == current:
            return Edit(current)
        if added is None:
            return Edit(new, [f"update thatch's {self.role} block"])
        return Edit(new, [f"add thatch's {self.role} block"], {"created": text is None, "separator": added})

    def present(self, text: str) -> bool:
        try:
            return self.markers.find(text) is not None
        except blocks.Broken:
            return True

    def notes(self, text: str | None) -> list[str]:
        if text and ORIGINAL_BLOCK in text:
            return [f"{self.path} also holds the original thatch's '# Persistence' instructions; remove them by"
                    " hand if you no longer use the original, so the agent reads one set"]
        return []

    def uninstall(self, text: str, facts: dict | None) -> Edit:
        try:
            found = self.markers.find(text)
        except blocks.Broken as exc:
            raise SetupProblem(f"{self.path}: {exc}; remove thatch's block by hand") from None
        if found is None:
            return Edit(text)
        new = blocks.remove(text, self.markers, (facts or {}).get("separator"))
        if facts and facts.get("created") and not new.strip():
            return Edit(None, [f"remove thatch's {self.role} block (and the file setup created)"])
        return Edit(new, [f"remove thatch's {self.role} block"])


# The first line of the instruction block the original thatch's setup writes.
ORIGINAL_BLOCK = "# Persistence\n\nThatch provides persistent memory across"
MARKDOWN = blocks.Markers("<!-- BEGIN thatch", "<!-- END thatch -->",
                          "<!-- BEGIN thatch: written by `thatch setup`; rerun it to update, --uninstall to remove -->")
