"""`thatch setup claude|cursor|codex`: wiring a coding agent's host to
thatch, safely.

Per host and scope (the project, or the user's configuration with
--global) setup manages three things: the MCP server registration, the
hooks (session start, every prompt, tool calls), and a marked instruction
block; targets.py says which files and what they hold. It reads every
file first and refuses (writing nothing) when one is malformed, holds a
foreign entry of the same name, or is reached through a symbolic link that
leads out of the directory setup manages; --plan stops there and shows the
links. Every write goes through files.replace_atomically (to a link's
target, when that stays inside); unrelated content keeps its bytes. What
uninstall needs to give a file back byte for byte (setup created it, the
containers it added, the separator before a block) is recorded in the state
directory's setup.json. An instruction block two hosts share (a project's
AGENTS.md: Codex and Cursor) stays while the other host still uses it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ...support.errors import Conflict
from ...support.files import make_dirs, private_dir, replace_atomically
from ...support.paths import state_dir
from . import HOSTS, tracked, versions
from .managed import Edit, HooksJson, MarkedBlock, SetupProblem
from .targets import Target, target

MANIFEST = "setup.json"


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
    private_dir(path.parent)
    replace_atomically(path, json.dumps(manifest, indent=2, sort_keys=True) + "\n", 0o600)


# -- plan, install, uninstall ---------------------------------------------------------------


@dataclass
class FileReport:
    path: Path
    role: str
    action: str  # create, update, unchanged, delete, absent
    changes: list[str]
    link: str | None = None  # where a symbolic link on the way leads

    def to_json(self) -> dict:
        return {"path": str(self.path), "role": self.role, "action": self.action, "changes": self.changes,
                "link": self.link}


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


def _inside(path: Path, directory: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(directory)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def check_links(target: Target, path: Path, env: Mapping[str, str]) -> str | None:
    """Where a symbolic link on the way to `path` leads (None: no link), or
    SetupProblem naming the link when it leads out of the directory setup
    manages: the repository for a project (a cloned repository can plant
    `.mcp.json -> ~/.ssh/config`), the user's home for --global (dotfiles
    kept in a repository of their own are fine), or into a `.git`
    directory within it."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    managed = target.root if target.scope == "project" else home
    base = Path(os.path.abspath(managed))
    probe = Path(os.path.abspath(path))
    links = [p for p in [probe, *probe.parents] if _inside_lexically(p, base) and p.is_symlink()]
    if not links:
        return None
    if not _inside(path, managed):
        link = links[-1]
        raise SetupProblem(f"{link} is a symbolic link to {os.path.realpath(link)}, outside {managed}; setup does not"
                           " follow it (replace the link with a file, or remove it), then run setup again")
    real = os.path.realpath(path)
    # Git's own files are inside the project but not setup's to write: a
    # clone can plant `CLAUDE.md -> .git/config` or a link to a hook.
    if ".git" in Path(os.path.relpath(real, os.path.realpath(managed))).parts:
        link = links[-1]
        raise SetupProblem(f"{link} is a symbolic link to {os.path.realpath(link)}, inside git's own files; setup does"
                           " not follow it (replace the link with a file, or remove it), then run setup again")
    return real


def _inside_lexically(path: Path, base: Path) -> bool:
    return path == base or base in path.parents


def _shared_elsewhere(managed: Any, target_: Target, env: Mapping[str, str], cwd: Path, executable: str) -> str | None:
    """The other host that still uses a shared instruction block, if any."""
    for other in getattr(managed, "shared_with", ()):
        where = target(other, env, cwd, executable, global_=target_.scope == "global")
        for file in where.files:
            if isinstance(file, MarkedBlock):
                continue
            try:
                text = _read(file.path)
                if text is not None and file.present(text):
                    return other
            except SetupProblem:
                return other  # can't tell: keep the block
    return None


def run(target_: Target, executable: str, env: Mapping[str, str], *, uninstall: bool = False,
        write: bool = True, cwd: Path | None = None) -> Report:
    """Plan every file's edit; refuse on the first problem; then (unless
    only planning) write them and record what uninstall needs."""
    manifest = load_manifest(env)
    planned: list[tuple[Any, Path, str | None, Edit, str | None]] = []
    try:
        for managed in target_.files:
            link = check_links(target_, managed.path, env)
            real = Path(os.path.realpath(managed.path))
            text = _read(managed.path)
            if uninstall:
                other = _shared_elsewhere(managed, target_, env, cwd or target_.root, executable)
                if text is None:
                    edit = Edit(None)
                elif other and managed.present(text):
                    edit = Edit(text, [f"keep thatch's {managed.role} block: {other} still uses it"], keep=True)
                else:
                    edit = managed.uninstall(text, manifest.get(str(real)))
            else:
                edit = managed.install(text)
            planned.append((managed, real, text, edit, link))
    except SetupProblem as exc:
        raise Conflict(f"cannot {'remove' if uninstall else 'set up'} {target_.host}: {exc}") from None
    reports, emptied = [], []
    try:
        for managed, real, text, edit, link in planned:
            kept = edit.keep
            action = "unchanged" if kept else _action(text, edit)
            reports.append(FileReport(managed.path, managed.role, action, edit.changes, link))
            if write and edit.changed and not kept:
                if edit.text is None:
                    emptied += manifest.get(str(real), {}).get("dirs", [])
                try:
                    _write(real, text, edit, manifest, uninstall)
                except OSError as exc:
                    undo = "" if uninstall else f"; 'thatch setup {target_.host} --uninstall' undoes what was written"
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
    notes = list(target_.notes)
    for managed, _real, text, _edit, _link in planned:
        if hasattr(managed, "notes"):
            notes += managed.notes(text)
    return Report(target_.host, target_.scope, target_.root, executable, uninstall, write, reports, notes)


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
    make_dirs(real.parent, 0o755)  # the host reads it; nobody else may write it
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
    """(state, detail) of one file: ok, rewritten (thatch's entries as setup
    writes them, reformatted or moved by the host), outdated (thatch's
    entries differ from what setup writes now), foreign (an entry named
    thatch that is someone else's), missing, absent or malformed."""
    try:
        text = _read(managed.path)
        if text is None:
            return "absent", ""
        special = managed.state(text) if hasattr(managed, "state") else None
        if special is not None and special[0] == "foreign":
            return special
        edit = managed.install(text)
        if not edit.changed:
            return special or ("ok", "")
        if managed.present(text):
            return "outdated", "; ".join(edit.changes)
        return "missing", ""
    except SetupProblem as exc:
        return "malformed", str(exc)


def status(env: Mapping[str, str], cwd: Path, executable: str, hosts: tuple[str, ...] = HOSTS) -> list[dict]:
    found = []
    for host in hosts:
        version = versions.installed(host, env)
        for global_ in (False, True):
            where = target(host, env, cwd, executable, global_=global_, version=version)
            files = [{"path": str(m.path), "role": m.role, **dict(zip(("state", "detail"), file_state(m)))}
                     for m in where.files]
            states = {f["state"] for f in files}
            if states <= {"ok", "rewritten"}:
                overall = "wired"
            elif states <= {"absent", "missing"}:
                overall = "not wired"
            elif states <= {"ok", "rewritten", "outdated"}:
                overall = "drifted"
            else:
                overall = "partial"
            events: set[str] = set()
            for m in where.files:
                if isinstance(m, HooksJson):
                    try:
                        text = _read(m.path)
                        events |= m.events(text) if text else set()
                    except SetupProblem:
                        pass
            warnings = versions.warnings(host, env, events) if overall != "not wired" else []
            if where.scope == "project":
                warnings += tracked.warnings(where.root, [m.path for m in where.files], env, executable, host)
            found.append({"host": host, "scope": where.scope, "state": overall, "version": versions.text(version)
                          if version else None, "files": files, "warnings": warnings})
    return found
