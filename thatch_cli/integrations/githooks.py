"""thatch's git hooks: installing, removing and inspecting them.

Hooks go into the hooks directory of the repository's *common* git dir, the
one git uses for every linked worktree. A hook that was already there is
renamed to `<name>.thatch-legacy` (same inode, so bytes and mode are kept),
and thatch's script runs it first and returns its exit status; uninstall
renames it back. thatch's scripts are recognised by their marker line.

When `core.hooksPath` points elsewhere, git never runs hooks from the common
dir, and that directory usually belongs to another tool (husky, a shared
team directory, a tracked folder); thatch refuses to install rather than
write into it or install hooks git would silently skip.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..location import switchcache
from ..support.errors import Conflict, NotFound
from ..support.files import make_dirs, replace_atomically, template
from .shell import sh_quote

HOOK_NAMES = ("post-checkout", "reference-transaction")
MARKER = "# thatch-hook v1"
_MARKER_PREFIX = b"# thatch-hook v"  # any version is ours to replace or remove
LEGACY_SUFFIX = ".thatch-legacy"
PLACEHOLDER = "@THATCH@"

# Hook states, as shown by status (and in --json, stable).
INSTALLED = "installed"  # thatch's hook, nothing chained
CHAINED = "chained"  # thatch's hook, running the previous hook first
FOREIGN = "foreign"  # someone else's hook; thatch's is not installed
MISSING = "missing"  # no hook at all


@dataclass(frozen=True)
class HooksLocation:
    common_dir: Path
    hooks_dir: Path  # where thatch installs: <common_dir>/hooks
    hooks_path: str | None = None  # core.hooksPath, when it sends git elsewhere


@dataclass
class HookReport:
    name: str
    path: Path
    state: str
    legacy: Path | None = None  # the chained previous hook, when there is one
    current: bool | None = None  # byte-identical to what install would write now (None: unknown)
    action: str | None = None  # what install/uninstall just did

    def public(self) -> dict:
        return {
            "name": self.name,
            "path": str(self.path),
            "state": self.state,
            "legacy": str(self.legacy) if self.legacy else None,
            "current": self.current,
            "action": self.action,
        }


@dataclass
class HooksResult:
    location: HooksLocation
    hooks: list[HookReport] = field(default_factory=list)

    def public(self) -> dict:
        return {
            "common_dir": str(self.location.common_dir),
            "hooks_dir": str(self.location.hooks_dir),
            "core_hooks_path": self.location.hooks_path,
            "active": self.location.hooks_path is None,
            "hooks": [h.public() for h in self.hooks],
        }


def render_hook(name: str, executable: str) -> str:
    if name not in HOOK_NAMES:
        raise ValueError(f"not a thatch hook: {name}")
    return template(f"git/{name}").replace(PLACEHOLDER, sh_quote(executable))


def is_thatch_hook(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return any(line.startswith(_MARKER_PREFIX) for line in head.splitlines()[:5])


def locate(start: Path) -> HooksLocation:
    """Hooks directory for the repository around `start` (any subdirectory
    or linked worktree), and core.hooksPath when it overrides it."""
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        repo = Repo.discover(os.fspath(start))
    except (NotGitRepository, OSError):
        raise NotFound(f"{start} is not inside a git repository") from None
    try:
        # dulwich reports a worktree's common dir as ".../worktrees/x/../..".
        common = Path(os.path.realpath(repo.commondir()))
        top = Path(repo.path)
        try:
            raw = repo.get_config_stack().get((b"core",), b"hooksPath")
        except KeyError:
            raw = None
    finally:
        repo.close()
    hooks_dir = common / "hooks"
    hooks_path = None
    if raw:
        hooks_path = os.fsdecode(raw)
        # git expands ~ and reads a relative value from where hooks run: the
        # top of the worktree (the git dir itself in a bare repository).
        resolved = Path(os.path.expanduser(hooks_path))
        if not resolved.is_absolute():
            resolved = top / resolved
        if os.path.realpath(resolved) == os.path.realpath(hooks_dir):
            hooks_path = None  # set, but to the default: nothing to refuse
    return HooksLocation(common, hooks_dir, hooks_path)


def _report(location: HooksLocation, name: str, rendered: str | None) -> HookReport:
    path = location.hooks_dir / name
    legacy = path.with_name(name + LEGACY_SUFFIX)
    has_legacy = os.path.lexists(legacy)
    if not os.path.lexists(path):
        return HookReport(name, path, MISSING, legacy if has_legacy else None)
    if not is_thatch_hook(path):
        return HookReport(name, path, FOREIGN, legacy if has_legacy else None)
    current = None
    if rendered is not None:
        try:
            current = path.read_bytes() == rendered.encode("utf-8")
        except OSError:
            current = False
    return HookReport(name, path, CHAINED if has_legacy else INSTALLED, legacy if has_legacy else None, current)


def _after(location: HooksLocation, name: str, rendered: str | None, action: str) -> HookReport:
    report = _report(location, name, rendered)
    report.action = action
    return report


def status(start: Path, executable: str | None = None) -> HooksResult:
    """Where each thatch hook stands. With `executable`, `current` says
    whether the installed script is exactly what install would write."""
    location = locate(start)
    result = HooksResult(location)
    for name in HOOK_NAMES:
        rendered = render_hook(name, executable) if executable else None
        result.hooks.append(_report(location, name, rendered))
    return result


def _write_script(path: Path, text: str) -> None:
    replace_atomically(path, text, 0o755)


def install(start: Path, executable: str) -> HooksResult:
    """Install (or update) both hooks; running it again changes nothing."""
    location = locate(start)
    if location.hooks_path is not None:
        raise Conflict(
            f"core.hooksPath is set to {location.hooks_path}, so git runs hooks from there and not from"
            f" {location.hooks_dir}; thatch will not write into a hooks directory another tool manages"
            " (unset it with `git config --unset core.hooksPath`, or see README for calling thatch from your hooks)",
            core_hooks_path=location.hooks_path,
            hooks_dir=str(location.hooks_dir),
        )
    rendered = {name: render_hook(name, executable) for name in HOOK_NAMES}
    reports = [_report(location, name, rendered[name]) for name in HOOK_NAMES]
    # Check every hook before touching any, so a refusal leaves nothing half-done.
    for report in reports:
        if report.state == FOREIGN and report.legacy is not None:
            raise Conflict(
                f"both {report.path} and {report.legacy} exist and neither is thatch's; move one of them away first",
                path=str(report.path),
            )
    make_dirs(location.hooks_dir, 0o755)
    result = HooksResult(location)
    for report in reports:
        text = rendered[report.name]
        if report.state == FOREIGN:
            os.rename(report.path, report.path.with_name(report.name + LEGACY_SUFFIX))
            _write_script(report.path, text)
            action = "chained"
        elif report.state == MISSING:
            _write_script(report.path, text)
            action = "installed"
        elif report.current:
            action = "unchanged"
        else:
            _write_script(report.path, text)
            action = "updated"
        result.hooks.append(_after(location, report.name, text, action))
    return result


def uninstall(start: Path) -> HooksResult:
    """Remove thatch's hooks and put back exactly what was there before."""
    location = locate(start)
    result = HooksResult(location)
    for name in HOOK_NAMES:
        report = _report(location, name, None)
        if report.state in (INSTALLED, CHAINED):
            if report.legacy is not None:
                os.replace(report.legacy, report.path)
                action = "restored"
            else:
                os.unlink(report.path)
                action = "removed"
        elif report.state == MISSING and report.legacy is not None:
            # thatch's script was deleted by hand: still give the old hook back.
            os.rename(report.legacy, report.path)
            action = "restored"
        else:
            action = "left alone" if report.state == FOREIGN else "nothing to do"
        result.hooks.append(_after(location, name, None, action))
    # What post-checkout cached in the git directories goes too.
    switchcache.remove_all(os.fspath(location.common_dir))
    return result
