"""`thatch _githook ...`: what thatch's git hooks run.

    _githook post-checkout <prev> <new> <flag>
        After a branch checkout: one line counting the memories scoped to the
        branch HEAD now names. Silent when there are none, and when the
        shell hook will say it (THATCH_SHELL_HOOK is set).
    _githook branch-deleted [--git-pid PID] [--created NAME]... -- BRANCH...
        From reference-transaction (state "committed"), for refs/heads lines
        whose new value is all zeros. Git fires that for more than deletions
        (pack-refs drops loose refs, a rename deletes the old name, a deletion
        fires twice), so each branch is confirmed gone first, renames are told
        apart, and a deletion is recorded once.

    _githook memories-fetched REMOTE...
        From reference-transaction, when a fetch updated
        refs/thatch/remotes/REMOTE/memories (thatch sync's fetch refspec):
        starts `thatch sync --from-hook` detached and returns at once, so the
        import (and its embedding) never holds git up.

All always exit 0 and never raise: git has already done its work (or, for
post-checkout, would report our failure as its own). Output goes to stdout;
the hook scripts send it to the terminal's stderr. Stdlib only, for speed.
"""

from __future__ import annotations

import os
import sqlite3
import sys

from ..location import gitfs, scope, switchcache
from ..storage import fastread
from ..support import paths
from ..support.textsafe import one_line, shell_word
from .prompt import switch_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Mapping, Sequence

def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _say(text: str) -> None:
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except (OSError, UnicodeError):
        pass


# -- post-checkout -------------------------------------------------------------------


def post_checkout(env: Mapping[str, str], cwd: str, args: Sequence[str]) -> None:
    """One line when the branch checked out has memories: the shell hook's
    branch-switch line (hot/prompt.py). Said by the shell hook instead when
    one runs in this shell (it exports THATCH_SHELL_HOOK), so a switch never
    prints twice."""
    # Only branch checkouts (flag 1); the branch comes from HEAD, not from
    # the arguments, which are commit ids.
    if (len(args) >= 3 and args[2] != "1") or env.get("THATCH_SHELL_HOOK"):
        return
    place = scope.here(env, cwd)
    repo = place.repo
    if place.branch is None or repo is None:
        return
    db = paths.db_file(env)
    # Before the read (see switchcache); only for thatch's own hook script,
    # the one reader of the cache (hand-written hooks get no file in .git).
    at = switchcache.stamp(db, repo.common_text) if env.get("THATCH_SWITCH_CACHE") == "1" else None
    conn = fastread.open_readonly(paths.db_file(env))
    if conn is None:
        return
    store = place.store
    try:
        counts = fastread.live_counts(conn, store)
    finally:
        conn.close()
    count = counts.get(place.branch, 0)
    if count:
        _say(switch_line(store, place.branch, count))
    if at is not None:
        # Every branch of the store, so the next switch anywhere needs no Python.
        lines = {branch: switch_line(store, branch, n) for branch, n in counts.items()}
        switchcache.write(env, cwd, repo.git_text, db, lines, at)


# -- branch deletion ------------------------------------------------------------------


def git_command_line(pid: int | None) -> list[str] | None:
    """argv of the git process that ran the hook (Linux /proc; None elsewhere)."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    return [os.fsdecode(a) for a in raw.split(b"\0") if a] or None


def rename_target(argv: Sequence[str] | None, old: str) -> str | None:
    """NEW when argv is `git [opts] branch -m|-M|--move [OLD] NEW` renaming `old`."""
    if not argv or "branch" not in argv:
        return None
    rest = list(argv[argv.index("branch") + 1:])
    if not any(a in ("-m", "-M", "--move") or (a[:1] == "-" and a[1:2] != "-" and "m" in a.lower()) for a in rest):
        return None
    positional = []
    for i, arg in enumerate(rest):
        if arg == "--":
            positional += rest[i + 1:]
            break
        if not arg.startswith("-"):
            positional.append(arg)
    if len(positional) == 1:
        return positional[0]  # renames the current branch, which is `old`
    if len(positional) == 2 and positional[0] == old:
        return positional[1]
    return None


def _finished_gone(loc: gitfs.GitLocation, branch: str) -> bool:
    # While git still holds the loose ref's lock, the "committed" we see is
    # the packed-refs half of the transaction; the final one comes next.
    if gitfs.branch_exists(loc, branch):
        return False
    return not os.path.exists(loc.common_dir / "refs" / "heads" / (branch + ".lock"))


def _renaming(loc: gitfs.GitLocation) -> bool:
    # git parks the old name's reflog here for the length of a rename.
    return os.path.exists(loc.common_dir / "logs" / "refs" / ".tmp-renamed-log")


def branch_deleted(env: Mapping[str, str], cwd: str, branches: Sequence[str], created: Sequence[str],
                   git_pid: int | None, now: str | None = None) -> None:
    loc = gitfs.locate(cwd)
    if loc is None:
        return
    gone = [b for b in dict.fromkeys(branches) if _finished_gone(loc, b)]
    if not gone:
        return
    from ..support.clock import format_ts, system_clock

    # An existing database only, never created or upgraded here, and a short
    # lock timeout: git must not wait behind another writer.
    conn = fastread.open_writable(paths.db_file(env))
    if conn is None:
        return  # no database, so no memories to speak of
    store = scope.here(env, cwd).store
    argv = git_command_line(git_pid)
    try:
        new_refs = [c for c in dict.fromkeys(created) if gitfs.branch_exists(loc, c)]
        for branch in gone:
            count: int | None  # None: the deletion was recorded before (record_deletion)
            target = rename_target(argv, branch)
            if target is None and len(gone) == 1 and len(new_refs) == 1:
                target = new_refs[0]  # newer git: one transaction holds both halves
            if target is not None or _renaming(loc):
                count = fastread.live_count(conn, store, branch)
                if count:
                    to = shell_word(target) if target else "NEW-NAME"
                    where = (f"{one_line(branch)}, renamed to {one_line(target)}" if target
                             else f"{one_line(branch)}, which was renamed")
                    _say(f"thatch: {_plural(count, 'memory is', 'memories are')} scoped to {where}"
                         f" — run 'thatch rescope --from {shell_word(branch)} --to {to}'")
                continue
            try:
                if not fastread.records_deletions(conn):
                    # A file no thatch command has upgraded yet (the original's): record nothing, still count.
                    count = fastread.live_count(conn, store, branch)
                    if count and _first_telling(env, store, branch, git_pid):
                        _say(f"thatch: {_plural(count, 'memory was', 'memories were')} scoped to deleted branch"
                             f" {one_line(branch)} — run 'thatch hygiene'")
                    continue
                count = fastread.record_deletion(conn, store, branch, now or format_ts(system_clock()), git_pid)
            except sqlite3.OperationalError as exc:
                # Git must not wait behind another writer: say what was missed.
                why = "read-only" if "readonly" in str(exc) else "busy (another process is writing)"
                _say(f"thatch: the database is {why}; the deletion of {one_line(branch)} was not recorded")
                continue
            if count:
                _say(f"thatch: {_plural(count, 'memory was', 'memories were')} scoped to deleted branch"
                     f" {one_line(branch)} — run 'thatch hygiene'")
    finally:
        conn.close()


# -- teammates' memories fetched ----------------------------------------------------

# What git exports to a hook about the repository it runs in; the import
# must find the repository from its directory, as every thatch command does.
_GIT_LOCAL_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR",
                  "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH")


def memories_fetched(env: Mapping[str, str], cwd: str, remotes: Sequence[str]) -> None:
    """Import what a fetch brought, in a process of its own (its own session,
    no terminal, output discarded): the import embeds, which takes longer
    than git should wait. thatch sync's lock keeps it from racing a sync."""
    if not remotes:
        return
    import subprocess

    child_env = {k: v for k, v in env.items() if k not in _GIT_LOCAL_ENV}
    subprocess.Popen([sys.executable, "-m", "thatch_cli", "sync", "--from-hook"], cwd=cwd, env=child_env,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True, close_fds=True)


def _first_telling(env: Mapping[str, str], store: str, branch: str, git_pid: int | None) -> bool:
    """Whether this deletion was not told yet: git fires the hook more than
    once for one deletion, and without the database's record of deletions
    a small marker in the runtime folder (git's pid, the time) says so."""
    import hashlib
    import time
    from pathlib import Path  # only once a branch is really gone

    from ..daemon.runtime import user_dir

    key = hashlib.sha256(f"{paths.db_file(env)}\0{store}\0{branch}".encode()).hexdigest()[:16]
    marker = Path(user_dir(env)) / f"deleted-{key}"
    try:
        pid, at = marker.read_text().split()
        if time.time() - float(at) < fastread.DUPLICATE_WINDOW_S and (git_pid is None or pid == str(git_pid)):
            return False
    except (OSError, ValueError):
        pass
    try:
        from ..support.files import make_dirs, replace_atomically

        make_dirs(marker.parent, 0o700)
        replace_atomically(marker, f"{git_pid or 0} {time.time()}", 0o600, durable=False)
    except OSError:
        pass
    return True


# -- entry point ----------------------------------------------------------------------


def _parse_deleted(args: list[str]) -> tuple[list[str], list[str], int | None]:
    branches: list[str] = []
    created: list[str] = []
    pid: int | None = None
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            branches.extend(rest)
            break
        if arg == "--created":
            created.append(next(rest, ""))
        elif arg == "--git-pid":
            value = next(rest, "")
            pid = int(value) if value.isdigit() else None
        else:
            branches.append(arg)
    return [b for b in branches if b], [c for c in created if c], pid


def main(argv: list[str]) -> int:
    env = os.environ
    what, args = (argv[0], argv[1:]) if argv else ("", [])
    try:
        if what == "post-checkout":
            post_checkout(env, os.getcwd(), args)
        elif what == "branch-deleted":
            branches, created, pid = _parse_deleted(args)
            branch_deleted(env, os.getcwd(), branches, created, pid)
        elif what == "memories-fetched":
            memories_fetched(env, os.getcwd(), [a for a in args if a])
        else:
            sys.stderr.write("usage: thatch _githook post-checkout|branch-deleted|memories-fetched ...\n")
            return 2
    except Exception as exc:
        if env.get("THATCH_DEBUG"):
            raise
        # One line, never a traceback: the checkout or deletion succeeded anyway.
        _say(f"thatch: hook failed ({type(exc).__name__}: {exc}); git was not affected")
    return 0
