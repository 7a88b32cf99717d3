"""`thatch flush-tools [--host claude|codex|cursor]`: the every-prompt hook
(Claude Code and Codex UserPromptSubmit, Cursor beforeSubmitPrompt).

Reads the host's payload (session id from `session_id` or `conversation_id`,
the prompt from the first of prompt, message, text, user_input, input) and
prints, first that applies:

1. an extraction nudge: this session has queued tool interactions; fetch
   them with get_extraction_payload and save what is durable. Firmer each
   time it is ignored (ops/extraction.py counts);
2. a recall nudge: up to five memories of the project store and global that
   relate to a prompt of 10+ characters (ops/nudge.py: a peek, which
   stamps nothing; cut-off on the dense cosine), with the tool to read them,
   as a block of stored notes (support/agent_text.py), at most MAX_CHARS characters;
3. a one-line reminder to save new knowledge;

and before it, once per session and file, the memories anchored to the
files the agent read or edited (noted by the tool hooks; ops/anchors.py),
each marked when the code it describes has changed since; and after tiers 2
and 3, the learned rules the prompt fires (hot/rules.py).

The model is used only through a warm daemon; a cold one is started in the
background and this prompt is matched by keywords. `--host` shapes the
output for that host (agentio.shaper; `--json` is Cursor's
`{"continue": true, "additional_context": "..."}`). On any error, or past
the deadline, it prints the reminder of tier 3.
"""

from __future__ import annotations

import os
import sys

from ..location.scope import project_dir
from ..ops import activity
from ..support import agent_text, fitting, paths
from .agentio import (
    PROMPT_KEYS,
    computed,
    encoded,
    host_option,
    parse_payload,
    read_payload,
    respond,
    session_id,
    shaper,
    text_field,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Callable, Mapping

WRITE_NUDGE = (f"{agent_text.PREFIX} After responding, check: did you learn new project knowledge, a user preference"
               " or a correction worth keeping? If so, save it with memory_remember.")
MAX_CHARS = 2_000  # like the session reminder's default: a prompt's context, not a document
SNIPPET_CHARS = 100


def extraction_nudge(count: int, missed: int, session: str) -> str:
    what = f"{count} tool interaction{'s' if count != 1 else ''} from this session"
    call = f'get_extraction_payload with session_id "{session}"'
    steps = (f"call {call} (a background sub-agent is ideal), save what is durable with memory_remember,"
             " then call extraction_done")
    if missed >= 3:
        return (f"{agent_text.PREFIX} IMPORTANT: {what} {'has' if count == 1 else 'have'} waited through {missed} prompts"
                " without being saved. Before"
                f" anything else, {steps}. If nothing is worth keeping, call extraction_done anyway.")
    verb = "is" if count == 1 else "are"
    if missed >= 1:
        return f"{agent_text.PREFIX} Reminder: {what} {verb} still queued for memory extraction. Now, please {steps}."
    return f"{agent_text.PREFIX} {what} {verb} queued for memory extraction: {steps}."


def recall_nudge(matches, max_chars: int = MAX_CHARS) -> str:
    """The matches as a block of stored notes: label, origin, the start of
    the content; within `max_chars`, dropping the weakest first (support/fitting.py)."""
    from ..ops.recall import snippet

    def item(memory) -> str:
        shown = agent_text.WITHHELD if agent_text.withheld(memory) else agent_text.line(snippet(memory, SNIPPET_CHARS))
        return f"- {agent_text.label(memory.label)} ({agent_text.origin(memory)}): {shown}"

    lines = [item(m.memory) + "".join(f"\n  doubt: {agent_text.line(d)}; check the code before relying on it"
                                      for d in getattr(m, "doubts", []))
             for m in matches]

    def text(kept: int) -> str:
        count = f"{kept} stored memor{'y' if kept == 1 else 'ies'}"
        return agent_text.block(f"{count} may relate to this prompt.", [
            *lines[:kept], "Read one in full with memory_show (its label) before relying on it."])

    kept = fitting.most(len(lines), lambda kept: len(text(kept)) <= max_chars, least=1)
    return fitting.prefix(text(kept), max_chars)


def related(env: Mapping[str, str], cwd: Path, prompt: str) -> list:
    """The matches of ops/nudge.py, through the warm daemon only (never a model in this process)."""
    db_path = paths.db_path(env)
    if not db_path.is_file():
        return []
    from ..daemon.runtime import disabled
    from ..ops import nudge
    from ..ops.context import Context
    from ..storage.memories import MemoryDB

    semantic = not disabled(env)
    with Context(env=env, cwd=cwd, use_daemon=True, wait_for_model=False,
                 _db=MemoryDB.open_existing(db_path)) as ctx:
        return nudge.related(ctx, prompt, threshold=nudge.threshold(env), semantic=semantic)


def files_nudge(found: list, max_chars: int = MAX_CHARS) -> str:
    """The memories anchored to files the agent opened (ops/anchors.about_files)
    as a block of stored notes, within `max_chars`."""
    from ..ops.recall import snippet

    lines = []
    for memory, where, doubts in found:
        shown = agent_text.WITHHELD if agent_text.withheld(memory) else agent_text.line(snippet(memory, SNIPPET_CHARS))
        lines.append(f"- {agent_text.label(memory.label)} ({agent_text.origin(memory)}), about"
                     f" {agent_text.line(', '.join(where))}: {shown}")
        lines += [f"  doubt: {agent_text.line(doubt)}; check the code before relying on it" for doubt in doubts]

    def text(kept: int) -> str:
        return agent_text.block("Stored memories about the files you opened in this session.", [
            *lines[:kept], "Read one in full with memory_show (its label) before relying on it."])

    kept = fitting.most(len(lines), lambda kept: len(text(kept)) <= max_chars, least=1)
    return fitting.prefix(text(kept), max_chars)


def opened_files_text(env: Mapping[str, str], payload: dict, session: str, items: list, cwd: str | None = None,
                      ) -> str:
    """Once per session and file: the memories anchored to the files the
    agent read or edited since the last prompt (noted by the tool hooks)."""
    from ..ops.extraction import Queue

    queue = Queue(env, session)
    fresh = [f["path"] for f in queue.files() if not f.get("shown")]
    db_path = paths.db_path(env)
    if not fresh or not db_path.is_file():
        return ""
    from ..ops import anchors
    from ..ops.context import Context
    from ..storage.memories import MemoryDB

    with Context(env=env, cwd=project_dir(env, payload, cwd), use_daemon=False, wait_for_model=False,
                 _db=MemoryDB.open_existing(db_path)) as ctx:
        found = anchors.about_files(ctx, fresh)
    queue.mark_shown(set(fresh))
    items += [(memory.label, memory.store, None) for memory, _where, _doubts in found]
    return files_nudge(found) if found else ""


def nudge_text(env: Mapping[str, str], payload: dict, host: str | None = None, cwd: str | None = None) -> str:
    """The hook's answer (before shaping). `cwd` is the hook process's
    directory when a daemon runs it for that process (hot/relay.py)."""
    from ..location.scope import here

    prompt = text_field(payload, PROMPT_KEYS)
    if prompt:
        # First of all: everything below then runs while the daemon embeds. A
        # prompt that gets the extraction nudge instead wasted a few ms of
        # the daemon's time, not the user's.
        embed_ahead(env, prompt)
    store = here(env, project_dir(env, payload, cwd)).store
    if activity.paused(env, store):
        return ""
    session = session_id(payload)
    queue = None
    if session:
        from ..ops.extraction import Queue

        queue = Queue(env, session)
    pending = queue.pending() if queue is not None else []
    items: list = []  # (label, store, score) of what this answer gives the agent, for `thatch activity`
    opened = opened_files_text(env, payload, session, items, cwd) if session else ""
    text, event = _tier_text(env, payload, queue, pending, items, cwd)
    activity.record(env, event, host, session, items, store)
    return f"{opened}\n\n{text}" if opened else text


def embed_ahead(env: Mapping[str, str], prompt: str) -> None:
    """Let a warm daemon embed the prompt while this process imports and
    reads the database (daemon/client.embed_ahead): under a CPU load the two
    then share the wait instead of adding up."""
    from .rules import MIN_PROMPT_CHARS

    if len(prompt.strip()) < MIN_PROMPT_CHARS or not os.path.isfile(paths.db_file(env)):
        return
    from ..daemon.client import embed_ahead as ask

    ask(env, prompt)


def _tier_text(env: Mapping[str, str], payload: dict, queue, pending: list, items: list, cwd: str | None,
               ) -> tuple[str, str]:
    if pending:
        return extraction_nudge(len(pending), queue.nudged(), queue.session_id), "extraction"
    prompt = text_field(payload, PROMPT_KEYS)
    nudge = WRITE_NUDGE
    if prompt:
        matches = related(env, project_dir(env, payload, cwd), prompt)
        if matches:
            nudge = recall_nudge(matches)
            items += [(m.memory.label, m.memory.store, m.score) for m in matches]
    from .rules import after

    return after(env, payload, nudge, items, cwd), "nudge"


def _shape(argv: list[str]) -> Callable[[str], str]:
    return shaper(host_option(argv), "UserPromptSubmit", **{"continue": True})


def main(argv: list[str], stdin: bytes | None = None) -> int:
    """The hook in this process. `stdin`: the host's payload when already
    read (hot/relay.py, whose daemon could not answer), else read here."""
    host = host_option(argv)
    payload = (lambda: read_payload(sys.stdin)) if stdin is None else (lambda: parse_payload(stdin))
    return respond(WRITE_NUDGE, lambda env: nudge_text(env, payload(), host), _shape(argv))


def served(argv: list[str], env: Mapping[str, str], cwd: str, stdin: bytes) -> bytes | None:
    """What main() prints, worked out for another process (its environment,
    directory and payload) by the daemon it relayed the hook to; None for a
    payload naming its project by a relative path (that process resolves it)."""
    host = host_option(argv)
    payload = parse_payload(stdin)
    roots = payload.get("workspace_roots")
    named = [payload.get("cwd"), roots[0] if isinstance(roots, list) and roots else None]
    if any(isinstance(path, str) and path and not os.path.isabs(path) for path in named):
        return None
    return encoded(_shape(argv)(computed(WRITE_NUDGE, lambda env: nudge_text(env, payload, host, cwd), env)))


def late(argv: list[str]) -> bytes:
    """What main() prints past its deadline."""
    return encoded(_shape(argv)(WRITE_NUDGE))
