"""The extraction queue: tool calls an agent made, kept per session until
the agent (or a sub-agent) reads them and saves what is worth keeping.

Agent hooks append (`thatch buffer-batch`, `thatch buffer-tool`), the agent hook
run at each prompt counts what is pending to nudge the agent (`thatch flush-tools`), and the
MCP tools hand the entries out (`get_extraction_payload`, which marks them
taken) and drop them (`extraction_done`; a `memory_remember` seen by the
agent hooks or made after a payload was fetched drains them too).

One JSON file per session under the state directory's queue/ (0700), each
0600, named by the session id with anything but letters, digits, `-` and
`_` replaced (plus a hash of the id when that changed it, so two ids never
share a file). A session id that is long (over MAX_SESSION_CHARS), not
valid Unicode (a lone surrogate) or holds control characters is known by a
hash of it instead (session_key): that is what is stored, shown in the
nudge and accepted back from the agent. Every change happens under an exclusive lock on the
session's lock file and replaces the queue file whole (files.replace_atomically),
so two hooks appending at once both land and a reader never sees half a
file. Entries are trimmed (each input and output to MAX_FIELD_CHARS) and the
queue is capped (MAX_ENTRIES, MAX_BYTES): the oldest are dropped first, and
counted. Queues untouched for STALE_DAYS are deleted.

Standard library only: the hooks that append run on every tool call.
"""

from __future__ import annotations

import json
import os
import re
import time
from contextlib import contextmanager

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Iterator, Mapping

MAX_SESSION_CHARS = 200
MAX_ENTRIES = 50
MAX_BYTES = 256 * 1024
MAX_FIELD_CHARS = 2_000
MAX_TITLE_CHARS = 120
STALE_DAYS = 7
LOCK_WAIT = 1.0
# Meta-tools that only orchestrate (loading a skill, starting a sub-agent):
# queueing them would feed the extraction nudge back into itself.
SKIPPED_TOOLS = frozenset({"skill", "task", "agent"})
# thatch's own MCP tools: never queued; these two drain the session's queue.
OWN_TOOLS = frozenset({"memory_remember", "memory_recall", "memory_list", "memory_show", "memory_forget",
                       "store_list", "find_duplicates", "dedup_mark_checked", "memory_hygiene",
                       "get_extraction_payload", "extraction_done"})
DRAINING_TOOLS = frozenset({"memory_remember", "extraction_done"})
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_SEPARATORS = re.compile(r"__|[:./]")
_TITLE_KEYS = ("command", "file_path", "path", "pattern", "query", "url", "description", "prompt")
# The files a tool call reads or edits (Claude Code, Codex, Cursor spell them so), kept per session
# apart from the entries: the next prompt brings up the memories anchored to them (hot/flush.py), once.
FILE_KEYS = ("file_path", "notebook_path", "target_file", "path")
EDITING_WORDS = ("edit", "write", "patch", "replace")
MAX_FILES = 50


def directory(env: Mapping[str, str]) -> Path:
    from ..support.paths import state_dir

    return state_dir(env) / "queue"


def session_key(session_id: str) -> str:
    """The session id as thatch keeps and shows it: as given when it is short
    one-line text, else `session-` and a hash of it (the same id always
    gives the same key, and a key is its own key)."""
    session_id = (session_id or "").strip()
    try:
        session_id.encode("utf-8")
        plain = len(session_id) <= MAX_SESSION_CHARS and not any(
            ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in session_id)
    except UnicodeEncodeError:
        plain = False
    if plain:
        return session_id
    import hashlib  # only for an id that needs it: ~3 ms a hook should not pay for a plain uuid

    return "session-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def file_name(session_id: str) -> str | None:
    """The queue's file name for a session id; None for a blank id."""
    session_id = session_key(session_id)
    if not session_id:
        return None
    safe = _UNSAFE.sub("_", session_id)[:80]
    if safe != session_id:
        import hashlib  # only for ids that needed changing: ~10 ms a hook should not pay for a plain uuid

        safe += "-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return safe


def own_tool(name: str) -> tuple[bool, bool]:
    """(is thatch's own tool, drains the queue) for a host's tool name:
    `mcp__thatch__memory_remember` (Claude Code), `MCP:memory_remember`, or
    the bare name."""
    parts = [p for p in _SEPARATORS.split(name.lower()) if p]
    last = parts[-1] if parts else ""
    ours = last in OWN_TOOLS and (len(parts) == 1 or "thatch" in parts or (len(parts) == 2 and parts[0] == "mcp"))
    return ours, ours and last in DRAINING_TOOLS


def trim(value: Any, limit: int = MAX_FIELD_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > limit:
        text = text[:limit] + f"… [{len(text) - limit} more characters]"
    # A lone surrogate (a host's "\ud800") cannot be written as UTF-8: it becomes U+FFFD.
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def title(tool: str, tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        for key in _TITLE_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                return trim(f"{tool}: {' '.join(value.split())}", MAX_TITLE_CHARS)
    return trim(tool, MAX_TITLE_CHARS)


def touched_file(tool: str, tool_input: Any, cwd: str | None) -> dict | None:
    """{path, edited} for a tool call that names a file (relative paths
    taken from the session's `cwd`); None otherwise."""
    if not isinstance(tool_input, dict):
        return None
    for key in FILE_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip() and "\0" not in value and len(value) <= 4096:
            path = value if os.path.isabs(value) or not cwd else os.path.join(cwd, value)
            return {"path": os.path.normpath(path), "edited": any(w in tool.lower() for w in EDITING_WORDS)}
    return None


def interaction(tool: str, tool_input: Any, output: Any) -> dict:
    return {"tool": trim(tool, 200), "title": title(tool, tool_input), "input": trim(tool_input),
            "output": trim(output if output is not None else "")}


class Queue:
    """One session's queue."""

    def __init__(self, env: Mapping[str, str], session_id: str) -> None:
        name = file_name(session_id)
        if name is None:
            raise ValueError("a queue needs a session id")
        self.session_id = session_key(session_id)
        self.dir = directory(env)
        self.path = self.dir / f"{name}.json"
        self.lock_path = self.dir / f"{name}.lock"

    # -- reading and writing -------------------------------------------------------------

    def read(self) -> dict:
        from ..support.files import read_json_object

        state = read_json_object(self.path)
        if not isinstance(state.get("entries"), list):
            state = {"session_id": self.session_id, "next": 1, "missed": 0, "dropped": 0, "entries": []}
        return state

    def _write(self, state: dict) -> None:
        from ..support.files import replace_atomically

        # An empty queue keeps its file: its sequence numbers must never start
        # over while a server still remembers the last one it handed out.
        replace_atomically(self.path, json.dumps(state, ensure_ascii=False, separators=(",", ":")), 0o600)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """The session's lock held (TimeoutError after LOCK_WAIT)."""
        from ..support.files import acquire_lock, private_dir

        private_dir(self.dir)
        fd = acquire_lock(self.lock_path, LOCK_WAIT)
        try:
            os.utime(fd)  # in use: not stale
            yield
        finally:
            os.close(fd)

    # -- operations ------------------------------------------------------------------------

    def append(self, interactions: list[dict], *, drain_first: bool = False, files: list[dict] | None = None) -> int:
        """Queue `interactions` (from interaction()); with `drain_first` (the
        agent saved a memory), first drop what was handed out for extraction,
        or everything queued when nothing was (the agent saved on its own from
        calls it saw). `files` (from touched_file()) are noted as the
        session's. Returns how many are queued."""
        with self._locked():
            state = self.read()
            if files:
                _note_files(state, files)
            if drain_first:
                handed_out = any(e.get("taken") for e in state["entries"])
                state["entries"] = [e for e in state["entries"] if handed_out and not e.get("taken")]
                state["missed"] = 0
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            for item in interactions:
                state["entries"].append({"seq": state["next"], "at": now, "taken": False, **item})
                state["next"] += 1
            _cap(state)
            self._write(state)
            count = len(state["entries"])
        _forget_stale(self.dir)
        return count

    def pending(self) -> list[dict]:
        return [e for e in self.read()["entries"] if not e.get("taken")]

    def take(self, max_chars: int) -> tuple[list[dict], int, int]:
        """(entries handed out, pending entries left, last seq handed out):
        the oldest pending entries that fit in `max_chars` of JSON (at least
        one), marked taken so the nudge stops asking for them."""
        with self._locked():
            state = self.read()
            given: list[dict] = []
            used, last = 0, 0
            for entry in state["entries"]:
                if entry.get("taken"):
                    continue
                size = len(json.dumps(entry, ensure_ascii=False))
                if given and used + size > max_chars:
                    break
                entry["taken"] = True
                given.append(entry)
                used, last = used + size, entry["seq"]
            state["missed"] = 0
            self._write(state)
            left = sum(1 for e in state["entries"] if not e.get("taken"))
        return given, left, last

    def release(self, seqs: set[int]) -> None:
        """Hand entries back (taken, then left out of a reply): pending again."""
        with self._locked():
            state = self.read()
            for entry in state["entries"]:
                if entry["seq"] in seqs:
                    entry["taken"] = False
            self._write(state)

    def drain(self, through: int | None = None) -> int:
        """Drop the entries handed out up to seq `through` (every entry when
        None); returns how many."""
        with self._locked():
            state = self.read()
            kept = [e for e in state["entries"]
                    if through is not None and (e["seq"] > through or not e.get("taken"))]
            dropped = len(state["entries"]) - len(kept)
            state["entries"], state["missed"] = kept, 0
            self._write(state)
        return dropped

    def files(self) -> list[dict]:
        """The files this session read or edited ({path, edited, shown}), oldest first."""
        found = self.read().get("files")
        return [f for f in found if isinstance(f, dict) and isinstance(f.get("path"), str)] \
            if isinstance(found, list) else []

    def mark_shown(self, paths: set[str]) -> None:
        """The memories anchored to `paths` were brought up: never again this session."""
        with self._locked():
            state = self.read()
            for f in state.get("files") or []:
                if isinstance(f, dict) and f.get("path") in paths:
                    f["shown"] = True
            self._write(state)

    def nudged(self) -> int:
        """Count one more nudge that found entries pending; returns how many came before it."""
        with self._locked():
            state = self.read()
            before = state.get("missed", 0)
            state["missed"] = before + 1
            self._write(state)
        return before


def _note_files(state: dict, files: list[dict]) -> None:
    """Add `files` to the session's, the newest last (an edit sticks; so does having been shown)."""
    known = [f for f in state.get("files") or [] if isinstance(f, dict) and isinstance(f.get("path"), str)]
    for new in files:
        old = next((f for f in known if f["path"] == new["path"]), None)
        if old is not None:
            known.remove(old)
        known.append({"path": new["path"], "edited": bool(new["edited"] or (old or {}).get("edited")),
                      "shown": bool((old or {}).get("shown"))})
    state["files"] = known[-MAX_FILES:]


def _cap(state: dict) -> None:
    """Drop the oldest entries until at most MAX_ENTRIES remain in MAX_BYTES."""
    entries = state["entries"]
    sizes = [len(json.dumps(e, ensure_ascii=False)) + 1 for e in entries]
    total = sum(sizes) + 200
    while len(entries) > MAX_ENTRIES or (len(entries) > 1 and total > MAX_BYTES):
        entries.pop(0)
        total -= sizes.pop(0)
        state["dropped"] = state.get("dropped", 0) + 1


def _forget_stale(path: Path) -> None:
    cutoff = time.time() - STALE_DAYS * 86400
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        target = os.path.join(path, name)
        try:
            if os.stat(target).st_mtime < cutoff:
                os.unlink(target)
        except OSError:
            pass
