"""The shell hook (`thatch init`): rendering the script a shell
evaluates at startup, finding the thatch executable and the running shell.

The scripts are data files (templates/shell/*.sh) with the absolute path of
the thatch executable substituted, so the hook never depends on PATH and
never looks thatch up per prompt. What they do at each prompt is documented
in the templates themselves.
"""

from __future__ import annotations

import os
import shutil
from typing import Mapping

from ..support.errors import InvalidInput, ThatchError
from ..support.files import template

SHELLS = ("bash", "zsh", "fish")

# (startup file, line to add, line that removes the hook from a running shell).
# The bash and zsh lines look in ~/.local/bin first: a login shell on Debian
# and Ubuntu reads ~/.bashrc from ~/.profile before ~/.profile puts that
# folder on PATH, and zsh there never does. Where no thatch is found the line
# prints nothing, so a startup file shared across machines never breaks.
SETUP: dict[str, tuple[str, str, str]] = {
    "bash": ("~/.bashrc", 'eval "$(PATH="$HOME/.local/bin:$PATH" thatch init bash 2>/dev/null)"', 'eval "$(thatch init --deactivate bash)"'),
    "zsh": ("~/.zshrc", 'eval "$(PATH="$HOME/.local/bin:$PATH" thatch init zsh 2>/dev/null)"', 'eval "$(thatch init --deactivate zsh)"'),
    "fish": ("~/.config/fish/config.fish", "thatch init fish | source", "thatch init --deactivate fish | source"),
}

PLACEHOLDER = "@THATCH@"


def sh_quote(value: str) -> str:
    """One word for POSIX sh, bash and zsh, whatever `value` contains."""
    return "'" + value.replace("'", "'\\''") + "'"


def fish_quote(value: str) -> str:
    # Inside fish single quotes only backslash and the quote itself are special.
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def quote(shell: str, value: str) -> str:
    return fish_quote(value) if shell == "fish" else sh_quote(value)


def check_shell(shell: str) -> str:
    name = (shell or "").strip().lower()
    if name not in SHELLS:
        raise InvalidInput(f"unsupported shell {shell!r}; choose one of {', '.join(SHELLS)}")
    return name


def render(shell: str, executable: str, *, deactivate: bool = False) -> str:
    shell = check_shell(shell)
    name = f"{shell}.deactivate.sh" if deactivate else f"{shell}.sh"
    return template(f"shell/{name}").replace(PLACEHOLDER, quote(shell, executable))


def resolve_executable(argv0: str, env: Mapping[str, str]) -> str:
    """Absolute path of the `thatch` program that is running, for embedding
    in hook scripts. Under `python -m thatch_cli` argv[0] is a source file,
    so PATH is asked instead."""
    base = os.path.basename(argv0 or "")
    if base.startswith("thatch") and not base.endswith(".py"):
        candidate = argv0 if os.path.dirname(argv0) else shutil.which(argv0, path=env.get("PATH"))
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    found = shutil.which("thatch", path=env.get("PATH"))
    if found:
        return os.path.abspath(found)
    raise ThatchError("cannot find the thatch executable: install thatch so that `thatch` runs from your shell")


def detect_shell(env: Mapping[str, str]) -> str:
    """The shell this command was started from (shellingham walks the process
    tree); $SHELL only when that finds nothing."""
    detected = None
    try:
        import shellingham

        detected = shellingham.detect_shell()[0]
    except Exception:  # ShellDetectionFailure, or a platform it cannot read
        detected = None
    source = "detected"
    if not detected:
        detected, source = os.path.basename(env.get("SHELL") or ""), "$SHELL"
    name = detected.lower().lstrip("-")
    if name.endswith(".exe"):
        name = name[: -len(".exe")]
    if name not in SHELLS:
        shown = name or "none"
        raise InvalidInput(f"unsupported shell ({source}: {shown}); name one of: {', '.join(SHELLS)}")
    return name
