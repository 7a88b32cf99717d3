"""`thatch _hook prompt --prev STATE`: the shell hook's one process.

The shell starts it only when the repository, its HEAD or (outside a
repository) the directory changed. It prints the new state on the first line,
for the shell to pass back as --prev next time, and then at most one line for
the user:

    thatch: acme/widget · 14 memories · 3 on feat/login · 2 orphaned (thatch hygiene)

That line appears only when the store differs from the state passed in (a
new shell passes nothing) and the store has live memories. Switching to
another branch of the same store prints a shorter line, only when that branch
has memories:

    thatch: 3 memories on feat/login in acme/widget (thatch list --this-branch)

Moving around inside one repository, or detaching HEAD for a rebase or
bisect, says nothing. Errors say nothing either: a prompt is no place for them.

Entering a repository whose store has memories with vectors also starts the
background model process (about 500 MB), so the first recall there is warm;
setting daemon.warm (THATCH_WARM=0) or daemon.enabled turns that off.

Stdlib only (plus thatch's stdlib-only modules), to stay inside 50 ms.
"""

from __future__ import annotations

import os
import sys

from ..location import scope
from ..storage import fastread
from ..support import paths
from ..support.textsafe import one_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Mapping

SEP = "\t"


def _plural(n: int) -> str:
    return f"{n} memory" if n == 1 else f"{n} memories"


def summary_line(store: str, branch: str | None, counts: Mapping[str | None, int], orphans: int) -> str | None:
    total = sum(counts.values())
    if total == 0:
        return None
    parts = [f"thatch: {one_line(store)}", _plural(total)]
    if branch and counts.get(branch):
        parts.append(f"{counts[branch]} on {one_line(branch)}")
    if orphans:
        parts.append(f"{orphans} orphaned (thatch hygiene)")
    return " · ".join(parts)


def switch_line(store: str, branch: str, count: int) -> str:
    """What a branch switch within one store says (the shell hook, or the
    git post-checkout hook when no shell hook runs): one line, and only
    when the branch has memories."""
    return (f"thatch: {_plural(count)} on {one_line(branch)} in {one_line(store)}"
            " (thatch list --this-branch)")


def summarize(env: Mapping[str, str], cwd: str, prev: str) -> tuple[str, str | None, bool]:
    """(new state, line to show or None, whether to warm the model: we
    entered another repository and its store has memories with vectors)."""
    place = scope.here(env, cwd)
    # The state travels as one line (tabs become spaces) and never carries a
    # control character from a crafted HEAD back through the shell.
    name = one_line(place.store)
    state = name + SEP + one_line(place.branch or "")
    prev_store = prev.split(SEP, 1)[0] if prev else None
    if place.repo is not None and place.branch is None and prev_store == name:
        # A detached HEAD (rebase, bisect) keeps the branch it left as the
        # state, so neither leaving nor returning to it prints anything.
        state = prev
    if state == prev:
        return state, None, False
    entered = place.repo is not None and name != prev_store
    conn = fastread.open_readonly(paths.db_file(env))
    if conn is None:
        return state, None, False
    try:
        counts = fastread.branch_counts(conn, place.store)
        warm = entered and bool(counts) and fastread.has_vectors(conn, place.store)
    except Exception:
        return state, None, False
    finally:
        conn.close()
    if prev_store == name:
        # Another branch of the same store: worth a line only when it has memories.
        count = counts.get(place.branch, 0) if place.branch else 0
        return state, switch_line(place.store, place.branch, count) if count and place.branch else None, entered
    return state, summary_line(place.store, place.branch, counts, scope.orphaned_count(place, counts)), warm


def _warm(env: Mapping[str, str]) -> None:
    """Let the search daemon start loading while the user looks around. Our
    output is already written: point stdout/stderr at /dev/null so a spawned
    daemon cannot hold the shell's command substitution open."""
    try:
        try:
            from ..daemon.warm import maybe_warm
        except ImportError:
            return
        sys.stdout.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)
        maybe_warm(env)
    except Exception:
        pass


def _parse(argv: list[str]) -> str | None:
    if not argv or argv[0] != "prompt":
        return None
    prev = ""
    rest = argv[1:]
    while rest:
        token = rest.pop(0)
        if token == "--prev" and rest:
            prev = rest.pop(0)
        elif token.startswith("--prev="):
            prev = token[len("--prev="):]
        else:
            return None
    return prev


def main(argv: list[str]) -> int:
    prev = _parse(argv)
    if prev is None:
        sys.stderr.write("usage: thatch _hook prompt [--prev STATE]\n")
        return 2
    env = os.environ
    try:
        state, line, warm = summarize(env, os.getcwd(), prev)
    except Exception:
        if env.get("THATCH_DEBUG"):
            raise
        return 0
    text = state + "\n" + (line + "\n" if line else "")
    try:
        try:
            sys.stdout.write(text)
        except UnicodeError:  # a terminal that is not UTF-8
            sys.stdout.write(text.encode("ascii", "replace").decode("ascii"))
        sys.stdout.flush()
    except OSError:
        return 0
    if warm:
        _warm(env)
    return 0
