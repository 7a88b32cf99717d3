"""completions/: the bash, zsh and fish completion scripts, for packagers.
The scripts are rendered by integrations/completion_scripts.py, from the
Typer app's definitions; `thatch completion install` renders the same text
at run time from the exported spec."""

from __future__ import annotations

from pathlib import Path

from ..integrations.completion_scripts import render_all
from . import cli_model

ROOT = Path(__file__).resolve().parents[2]
REPO_DIR = ROOT / "completions"
FILES = {"bash": "thatch.bash", "zsh": "_thatch", "fish": "thatch.fish"}


def definitions() -> dict:
    return {"commands": cli_model.commands(), "groups": cli_model.groups()}


def outputs() -> dict[Path, str]:
    """Every file this generator owns, with the text it should hold."""
    return {REPO_DIR / FILES[shell]: text for shell, text in render_all(definitions()).items()}


def write() -> list[Path]:
    written = []
    for path, text in outputs().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
