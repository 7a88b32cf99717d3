"""`thatch _daemon`: the daemon process (daemon/server.py), started by
daemon/runtime.spawn, with the agent hooks it runs for their processes
(hot/relay.py) handed to it: the daemon sits below the hooks and knows them
only as this table."""

from __future__ import annotations

import importlib

from .relay import RELAYED

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Callable


def _hook(module: str) -> Callable[[list[str], dict[str, str], str, bytes], tuple[int, bytes] | None]:
    def run(argv: list[str], env: dict[str, str], cwd: str, stdin: bytes) -> tuple[int, bytes] | None:
        out = importlib.import_module(module).served(argv, env, cwd, stdin)
        return None if out is None else (0, out)  # hooks exit 0
    return run


def main(argv: list[str]) -> int:
    if argv != ["serve"]:
        import sys

        sys.stderr.write("usage: thatch _daemon serve\n")
        return 2
    from ..daemon.server import main as serve

    return serve(hooks={name: _hook(module) for name, module in RELAYED.items()})
