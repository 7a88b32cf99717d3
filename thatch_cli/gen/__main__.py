"""Regenerate every generated file from the CLI definitions."""

from __future__ import annotations

import importlib
import sys

# Each module exposes write() -> list of paths written; tests/cli/test_generated.py
# checks that each one's files are current and that every writer is listed here.
GENERATORS = ["spec", "completions", "man", "tree", "secret_rules"]


def main(argv: list[str]) -> int:
    wanted = argv or GENERATORS
    for name in wanted:
        if name not in GENERATORS:
            print(f"unknown generator {name!r}; choose from {', '.join(GENERATORS)}", file=sys.stderr)
            return 2
        for path in importlib.import_module(f"{__package__}.{name}").write():
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
