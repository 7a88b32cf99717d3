"""thatch: a local, git-aware memory store for coding agents.

The library API (the command line, hooks and MCP server use the same
operations):

    import thatch_cli as thatch

    with thatch.Context.open("~/notes.db", cwd="~/src/widget") as ctx:
        thatch.remember(ctx, "Tag, build the wheel, twine upload.", "Release process")
        for result in thatch.peek(ctx, "how do I publish a new version?").results:
            print(f"{result.score:.2f}", result.memory.label)

Names are imported on first use, so `import thatch_cli` stays cheap for the
hot paths that import its submodules (it imports nothing, not even typing).
"""

from __future__ import annotations

__version__ = "0.1.0"

# name -> module that defines it
_API = {
    "Context": "thatch_cli.ops.context",
    "Memory": "thatch_cli.memory.records",
    "remember": "thatch_cli.ops.remember",
    "peek": "thatch_cli.ops.recall",
    "recall": "thatch_cli.ops.recall",
    "list_memories": "thatch_cli.ops.memories",
    "show": "thatch_cli.ops.memories",
    "forget": "thatch_cli.ops.memories",
    "stores": "thatch_cli.ops.memories",
    "reindex": "thatch_cli.ops.reindex",
    "hygiene": "thatch_cli.ops.hygiene",
    "duplicates": "thatch_cli.ops.dedup",
    "history": "thatch_cli.ops.history",
    "restore_memory": "thatch_cli.ops.history",
    "backup": "thatch_cli.ops.backup",
    "restore": "thatch_cli.ops.backup",
    "ThatchError": "thatch_cli.support.errors",
    "InvalidInput": "thatch_cli.support.errors",
    "NotFound": "thatch_cli.support.errors",
    "Conflict": "thatch_cli.support.errors",
    "DatabaseError": "thatch_cli.support.errors",
}
_RENAMED = {"hygiene": "report"}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> object:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'thatch_cli' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value
    return value
