"""The README's shell line in login shells (ssh, the console, tmux's
default), as Debian and Ubuntu set them up: the stock ~/.profile reads
~/.bashrc before it puts ~/.local/bin on PATH, and zsh there never does.
thatch is installed the README's way, as a link in ~/.local/bin."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from integrations.test_shell_init import PtyShell, last_value
from thatch_cli.integrations.shell import SETUP

from helpers import THATCH

# Debian's /etc/skel/.profile and the start of its .bashrc, as they matter here.
DEBIAN_PROFILE = """\
if [ -n "$BASH_VERSION" ]; then
    if [ -f "$HOME/.bashrc" ]; then
        . "$HOME/.bashrc"
    fi
fi
if [ -d "$HOME/bin" ] ; then
    PATH="$HOME/bin:$PATH"
fi
if [ -d "$HOME/.local/bin" ] ; then
    PATH="$HOME/.local/bin:$PATH"
fi
"""
DEBIAN_BASHRC = """\
case $- in
    *i*) ;;
      *) return;;
esac
"""
HOOKS = {"bash": 'echo "hooks=[$PROMPT_COMMAND]"', "zsh": 'echo "hooks=[$precmd_functions]"'}
LOGIN = {"bash": ["bash", "-l", "-i"], "zsh": ["zsh", "-l", "-i"]}
RC = {"bash": ".bashrc", "zsh": ".zshrc"}
OLD_LINE = {"bash": 'eval "$(thatch init bash)"', "zsh": 'eval "$(thatch init zsh)"'}


def _home(tmp_path: Path, shell: str, line: str, *, installed: bool) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".profile").write_text(DEBIAN_PROFILE)
    (home / RC[shell]).write_text((DEBIAN_BASHRC if shell == "bash" else "") + line + "\n")
    if installed:
        (home / ".local" / "bin").mkdir(parents=True)
        (home / ".local" / "bin" / "thatch").symlink_to(THATCH)
    return home


def _login(shell: str, home: Path, tmp_path: Path) -> tuple[str, str]:
    """(what the shell printed while starting, the hooks it holds) of a login shell."""
    env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "TERM": "dumb", "HISTFILE": os.devnull,
           "THATCH_DB": str(tmp_path / "thatch.db"), "THATCH_DAEMON": "0", "LANG": "C.UTF-8"}
    sh = PtyShell(LOGIN[shell], env, home, "$?")
    try:
        started, _ = sh.run("true")
        return started, last_value(sh.run(HOOKS[shell])[0], "hooks")
    finally:
        sh.close()


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_readme_line_installs_the_hook_in_a_login_shell(shell, tmp_path):
    if not shutil.which(shell):
        pytest.skip(f"{shell} not installed")
    started, hooks = _login(shell, _home(tmp_path, shell, SETUP[shell][1], installed=True), tmp_path)
    assert "_thatch_hook" in hooks, started
    assert "not found" not in started, started


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_line_that_trusted_path_fails_there(shell, tmp_path):
    """What the README said before: the same login shell finds no thatch."""
    if not shutil.which(shell):
        pytest.skip(f"{shell} not installed")
    started, hooks = _login(shell, _home(tmp_path, shell, OLD_LINE[shell], installed=True), tmp_path)
    assert "_thatch_hook" not in hooks and "not found" in started


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_a_startup_file_shared_with_a_machine_without_thatch_stays_silent(shell, tmp_path):
    if not shutil.which(shell):
        pytest.skip(f"{shell} not installed")
    started, hooks = _login(shell, _home(tmp_path, shell, SETUP[shell][1], installed=False), tmp_path)
    assert "_thatch_hook" not in hooks
    assert "thatch" not in started.replace("true", ""), started
