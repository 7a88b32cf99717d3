"""docs/architecture.md's tree: one line per package and top-level module of
thatch_cli, the first sentence of its docstring, so the picture of the code
cannot drift from it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "thatch_cli"
DOC = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- tree: `python -m thatch_cli.gen tree` writes it from the docstrings -->"
END = "<!-- /tree -->"


def summary(path: Path) -> str:
    """The first sentence of a module's docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = " ".join(doc.split("\n\n", 1)[0].split())
    match = re.match(r"(.+?[.])(\s|$)", first)
    return (match.group(1) if match else first).rstrip(".:")


def lines() -> list[str]:
    """`name  summary` for each top-level module, then each package and subpackage."""
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        found.append((path.name, summary(path)))
    for init in sorted(PACKAGE.rglob("__init__.py")):
        if init.parent != PACKAGE and "__pycache__" not in init.parts:
            found.append((init.parent.relative_to(PACKAGE).as_posix() + "/", summary(init)))
    width = max(len(name) for name, _ in found) + 2
    return [f"  {name.ljust(width)}{text}" for name, text in found]


def render(text: str) -> str:
    """`text` (the document) with its tree block rewritten."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    block = "\n```\nthatch_cli/\n" + "\n".join(lines()) + "\n```\n"
    return text[:start] + block + text[end:]


def outputs() -> dict[Path, str]:
    return {DOC: render(DOC.read_text(encoding="utf-8"))}


def write() -> list[Path]:
    for path, text in outputs().items():
        path.write_text(text, encoding="utf-8")
    return list(outputs())
