"""`thatch reminder [--host claude|codex|cursor] [--max-chars N]`: the
session-start hook (Claude Code and Codex SessionStart, Cursor
sessionStart).

Prints a short context block for the agent: the detected store and branch,
how many memories they hold, the labels of this branch's memories and of the
most used ones (stored text, so the block says they are notes, not
instructions: agent_text.py), hygiene counts with where to look, and when to
call the memory tools. At most --max-chars characters (default 2,000; label
lists shrink first, fitting.py). `--host` shapes the output as that host
reads it (agentio.shaper; `--json` is Cursor's, as in the original thatch).
No model, no writes; on any error or past the deadline it prints the static
reminder instead.
"""

from __future__ import annotations

import sys
import time
TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~2 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Mapping

from .. import agent_text, fitting, paths
from ..location import scope
from ..storage import hooks
from ..textsafe import one_line
from ..location.scope import project_dir
from .agentio import host_option, read_payload, respond, shaper

DEFAULT_MAX_CHARS = 2_000
STALE_DAYS = 90  # ops.hygiene.DEFAULT_STALE_DAYS (a test checks); hygiene's module is too heavy to import here
WHEN = ("When to use it: call memory_recall before answering about this project's architecture, conventions or"
        " past decisions, or the user's preferences; call memory_remember when you learn something durable (a"
        " decision, a convention, a non-obvious fix, a correction).")
STATIC = f"{agent_text.PREFIX} This project keeps long-term memory in thatch (MCP tools memory_recall, memory_remember). {WHEN}"


def _labels(labels: list[str], more: int = 0) -> str:
    shown = ", ".join(agent_text.label(label) for label in labels)
    return shown + (f" (+{more} more)" if more else "")


def reminder(env: Mapping[str, str], cwd: Path, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    place = scope.here(env, cwd)
    store, branch = place.store, place.branch
    db_path = paths.db_path(env)
    conn = hooks.open_readonly(db_path)
    if conn is None:
        return _fit([f"{agent_text.PREFIX} No memories yet for {one_line(store)}.", WHEN], max_chars)
    try:
        cutoff = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - STALE_DAYS * 86400))
        counts, stale = hooks.branch_counts_and_stale(conn, store, cutoff)
        global_count = sum(hooks.branch_counts(conn, scope.GLOBAL).values()) if store != scope.GLOBAL else 0
        on_branch = hooks.branch_labels(conn, store, branch) if branch and counts.get(branch) else []
        top = hooks.top_memories(conn, store, 8)
        version = hooks.store_version(conn, store)
    finally:
        conn.close()
    total = sum(counts.values())
    where = one_line(store) + (f", branch {one_line(branch)}" if branch else "")
    head = f"{agent_text.PREFIX} Memory for {where}: {total} memor{'y' if total == 1 else 'ies'}"
    if on_branch:
        head += f" ({len(on_branch)} on this branch)"
    if store != scope.GLOBAL:
        head += f", plus {global_count} in global"
    lists = []
    if on_branch:
        lists.append(("On this branch: ", on_branch))
    if top:
        lists.append(("Most used: ", [label for label, _count, _confidence in top]))
    first = [head + "."] + ([agent_text.NOTE] if lists else [])
    hygiene = _hygiene(env, place, db_path, counts, stale, version)
    return _fit(first, max_chars, lists, [hygiene, WHEN] if hygiene else [WHEN])


def _hygiene(env, place, db_path, counts, stale: int, version: int | None) -> str:
    from ..ops import pair_counts

    parts = []
    cached = pair_counts.lookup(env, db_path, place.store)
    if cached and cached["pairs"]:
        pairs = cached["pairs"]
        when = "" if cached.get("version") == version else f" as of {str(cached.get('checked_at'))[:10]}"
        parts.append(f"{pairs} near-duplicate pair{'s' if pairs != 1 else ''}{when}")
    if stale:
        parts.append(f"{stale} stale (no update or recall for {STALE_DAYS} days)")
    orphaned = scope.orphaned_count(place, counts)
    if orphaned:
        parts.append(f"{orphaned} on deleted branches")
    if not parts:
        return ""
    return (f"Hygiene: {', '.join(parts)}. When convenient (not before the user's request), memory_hygiene lists"
            " them (thatch hygiene in a shell).")


def _fit(first: list[str], max_chars: int, lists: list | None = None, last: list[str] | None = None) -> str:
    """The lines within `max_chars` (fitting.py): the label lists shrink
    first, the most used before this branch's, then the text is cut."""
    lists, last = lists or [], last or []

    def text(kept: list[int]) -> str:
        middle = [prefix + _labels(labels[:n], len(labels) - n) for (prefix, labels), n in zip(lists, kept) if n]
        return "\n".join(first + middle + last)

    kept = fitting.keep([len(labels) for _, labels in lists], lambda kept: len(text(kept)) <= max_chars,
                        order=range(len(lists) - 1, -1, -1))
    return fitting.prefix(text(kept), max_chars)


def _options(argv: list[str]) -> int:
    max_chars = DEFAULT_MAX_CHARS
    rest = list(argv)
    while rest:
        token = rest.pop(0)
        if token == "--max-chars" and rest and rest[0].isdigit():
            max_chars = max(200, int(rest.pop(0)))
        elif token.startswith("--max-chars=") and token.split("=", 1)[1].isdigit():
            max_chars = max(200, int(token.split("=", 1)[1]))
    return max_chars


def main(argv: list[str]) -> int:
    max_chars = _options(argv)

    def compute(env) -> str:
        return reminder(env, project_dir(env, read_payload(sys.stdin)), max_chars)

    return respond(STATIC, compute, shaper(host_option(argv), "SessionStart"))
