"""Which of setup's files git tracks and still hold a path of this
machine (`thatch setup --status` warns): a teammate who pulls such a file
gets hooks pointing at a path they do not have. One `git ls-files` per
project; status is not a hot path.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterable, Mapping


def _tracked(root: Path, paths: list[Path]) -> set[Path]:
    relative = [os.path.relpath(p, root) for p in paths]
    try:
        done = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", *relative], capture_output=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return set()
    if done.returncode != 0:
        return set()
    return {root / name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name}


def machine_markers(env: Mapping[str, str], executable: str) -> list[str]:
    """Strings only this machine's files would hold: where thatch is, the home directory."""
    home = env.get("HOME") or os.path.expanduser("~")
    found = [executable, os.path.realpath(executable), os.path.dirname(executable)]
    if home and home != os.sep:
        found.append(home.rstrip(os.sep) + os.sep)
    return sorted({m for m in found if m and os.path.isabs(m)}, key=len, reverse=True)


def warnings(root: Path, paths: Iterable[Path], env: Mapping[str, str], executable: str, host: str) -> list[str]:
    """One warning per tracked file that holds a machine path."""
    files = [p for p in paths if p.is_file()]
    if not files:
        return []
    markers = machine_markers(env, executable)
    found = []
    for path in sorted(_tracked(root, files)):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        hit = next((m for m in markers if m in text), None)
        if hit is not None:
            found.append(f"{os.path.relpath(path, root)} is tracked by git and holds a path of this machine ({hit}):"
                         f" a teammate who pulls it gets that path; `thatch setup {host}` moves it to your own"
                         " settings")
    return found
