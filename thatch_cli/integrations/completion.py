"""Installing the generated shell completion scripts where each shell looks.

The script is rendered by the same generator that writes completions/ in
the repository, from the CLI definitions exported in cli/spec.py, so what
is installed is exactly what was generated.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..support.errors import ThatchError
from ..support.files import make_dirs, replace_atomically
from .shell import check_shell


@dataclass
class Installed:
    shell: str
    path: Path
    status: str  # "installed" (new file), "updated" (content replaced) or "unchanged"
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"shell": self.shell, "path": str(self.path), "status": self.status, "notes": self.notes}


def script(shell: str, definitions: dict[str, Any]) -> str:
    """The completion script for `shell`, from the command line's definitions
    (the generated spec, which the command line hands down)."""
    from .completion_scripts import RENDERERS, tree

    return RENDERERS[check_shell(shell)](tree(definitions))


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def target(shell: str, env: Mapping[str, str]) -> Path:
    home = _home(env)
    if shell == "bash":
        data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
        return data / "bash-completion" / "completions" / "thatch"
    if shell == "zsh":
        return home / ".zfunc" / "_thatch"
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    return config / "fish" / "completions" / "thatch.fish"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _live(path: Path) -> str:
    """A shell startup file's text without its comment lines (Debian's
    /etc/bash.bashrc carries the bash-completion block commented out)."""
    return "\n".join(line for line in _read(path).splitlines() if not line.lstrip().startswith("#"))


# Where bash-completion's loader is installed (Debian and Ubuntu, older
# systems, Homebrew on Intel and Apple silicon, Fedora's profile.d).
LOADERS = ("/usr/share/bash-completion/bash_completion", "/etc/bash_completion",
           "/usr/local/share/bash-completion/bash_completion", "/usr/local/etc/profile.d/bash_completion.sh",
           "/opt/homebrew/etc/profile.d/bash_completion.sh", "/etc/profile.d/bash_completion.sh")


def _sources_completion(path: Path, home: Path) -> bool:
    """Whether the startup file at `path` loads bash-completion: it names the
    loader (.../bash_completion, or profile.d/bash_completion.sh; a script of
    a bash-completion/completions directory is not it) and that file exists.
    Debian's stock ~/.bashrc names it inside `if [ -f ... ]`, so on a system
    without the bash-completion package it loads nothing."""
    import re

    named = re.findall(r"[^\s'\";|&()<>=]*bash_completion(?:\.sh)?\b", _live(path))
    for name in named:
        name = name.replace("$HOME", str(home)).replace("${HOME}", str(home))
        if name.startswith("~/"):
            name = str(home / name[2:])
        if "$" in name or "`" in name:  # computed (`$(brew --prefix)/...`): trust an installed loader
            if any(Path(loader).is_file() for loader in LOADERS):
                return True
        elif Path(name).is_file():
            return True
    return False


def bash_completion_loaded(env: Mapping[str, str]) -> bool:
    """Whether a new interactive bash loads bash-completion (whose loader
    finds scripts in ~/.local/share/bash-completion/completions): the
    user's ~/.bashrc or ~/.bash_profile, or the system's bashrc, sources it
    (Fedora's /etc/bashrc through /etc/profile.d). A plain ~/.bashrc on a
    system whose bashrc does not (macOS, Debian with a hand-written
    ~/.bashrc) gets nothing."""
    home = _home(env)
    if any(_sources_completion(f, home) for f in (home / ".bashrc", home / ".bash_profile",
                                                  Path("/etc/bash.bashrc"), Path("/etc/bashrc"))):
        return True
    profile_d = Path("/etc/profile.d")
    return "profile.d" in _live(Path("/etc/bashrc")) and profile_d.is_dir() and any(
        _sources_completion(f, home) for f in profile_d.glob("*.sh"))


def _notes(shell: str, path: Path, env: Mapping[str, str]) -> list[str]:
    home = _home(env)
    if shell == "bash":
        if bash_completion_loaded(env):
            return ["bash-completion loads it in new shells."]
        bashrc = home / ".bashrc"
        if f"source {path}" in _read(bashrc) or f". {path}" in _read(bashrc):
            return [f"{bashrc} sources it: new shells have it."]
        return [f"Nothing loads bash-completion here: add to {bashrc}: source {path}",
                "Then start a new shell."]
    if shell == "zsh":
        zdot = Path(env.get("ZDOTDIR") or home)
        rc = _read(zdot / ".zshrc")
        notes = []
        if ".zfunc" not in rc:
            notes.append(f"Add to {zdot / '.zshrc'}, before compinit runs: fpath=(~/.zfunc $fpath)")
        if "compinit" not in rc:
            notes.append(f"{zdot / '.zshrc'} does not start zsh's completion system; add after that line:"
                         " autoload -Uz compinit && compinit")
        notes.append("Then start a new shell (if completion does not appear: rm -f ~/.zcompdump*; exec zsh).")
        return notes
    return ["fish loads it in new shells."]


def install(shell: str, env: Mapping[str, str], definitions: dict[str, Any]) -> Installed:
    """Write the script for `shell` where it looks; a no-op when already current."""
    shell = check_shell(shell)
    text = script(shell, definitions)
    path = target(shell, env)
    try:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
    except OSError:
        current = None
    if current == text:
        return Installed(shell, path, "unchanged", _notes(shell, path, env))
    try:
        make_dirs(path.parent, 0o755)  # the shell reads it; nobody else may replace it
        replace_atomically(path, text, 0o644)
    except OSError as exc:
        raise ThatchError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return Installed(shell, path, "installed" if current is None else "updated", _notes(shell, path, env))
