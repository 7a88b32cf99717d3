"""`thatch flush-tools [--json]`: the every-prompt hook (Claude Code and
Codex UserPromptSubmit, Cursor beforeSubmitPrompt).

Reads the host's payload (session id from `session_id` or `conversation_id`,
the prompt from the first of prompt, message, text, user_input, input) and
prints, first that applies:

1. an extraction nudge: this session has queued tool interactions; fetch
   them with get_extraction_payload and save what is durable. Firmer each
   time it is ignored (ops/extraction.py counts);
2. a recall nudge: up to five memories of the project store and global that
   relate to a prompt of 10+ characters (ops/nudge.py: telemetry-free
   search, cut-off on the dense cosine), with the tool to read them;
3. a one-line reminder to save new knowledge.

The model is used only through a warm daemon; a cold one is started in the
background and this prompt is matched by keywords. `--json` prints
`{"continue": true, "additional_context": "..."}`. On any error, or past
the deadline, it prints the reminder of tier 3.
"""

from __future__ import annotations

import sys
TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~2 ms
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Mapping

from .. import paths
from ..location.scope import project_dir
from .agentio import PROMPT_KEYS, context_json, read_payload, respond, session_id, text_field

WRITE_NUDGE = ("[thatch] After responding, check: did you learn new project knowledge, a user preference or a"
               " correction worth keeping? If so, save it with memory_remember.")


def extraction_nudge(count: int, missed: int, session: str) -> str:
    what = f"{count} tool interaction{'s' if count != 1 else ''} from this session"
    call = f'get_extraction_payload with session_id "{session}"'
    steps = (f"call {call} (a background sub-agent is ideal), save what is durable with memory_remember,"
             " then call extraction_done")
    if missed >= 3:
        return (f"[thatch] IMPORTANT: {what} {'has' if count == 1 else 'have'} waited through {missed} prompts"
                " without being saved. Before"
                f" anything else, {steps}. If nothing is worth keeping, call extraction_done anyway.")
    verb = "is" if count == 1 else "are"
    if missed >= 1:
        return f"[thatch] Reminder: {what} {verb} still queued for memory extraction. Now, please {steps}."
    return f"[thatch] {what} {verb} queued for memory extraction: {steps}."


def recall_nudge(matches) -> str:
    from ..ops.recall import snippet
    from ..textsafe import one_line

    lines = [f"[thatch] {len(matches)} memor{'y relates' if len(matches) == 1 else 'ies relate'} to this prompt:"]
    for match in matches:
        memory = match.memory
        lines.append(f"- {one_line(memory.label)} ({one_line(memory.store)}): {one_line(snippet(memory, 100))}")
    lines.append("Read them in full with memory_show (label) or memory_recall before responding.")
    return "\n".join(lines)


def related(env: Mapping[str, str], cwd: Path, prompt: str) -> list:
    """The matches of ops/nudge.py, through the warm daemon only (never a model in this process)."""
    db_path = paths.db_path(env)
    if not db_path.is_file():
        return []
    from ..context import Context
    from ..daemon.runtime import disabled
    from ..ops import nudge
    from ..storage.memories import MemoryDB

    semantic = not disabled(env)
    with Context(env=env, cwd=cwd, use_daemon=True, wait_for_model=False,
                 _db=MemoryDB.open_existing(db_path)) as ctx:
        return nudge.related(ctx, prompt, cosine=nudge.threshold(env), semantic=semantic)


def nudge_text(env: Mapping[str, str], payload: dict) -> str:
    session = session_id(payload)
    if session:
        from ..ops.extraction import Queue

        queue = Queue(env, session)
        pending = queue.pending()
        if pending:
            return extraction_nudge(len(pending), queue.nudged(), queue.session_id)
    prompt = text_field(payload, PROMPT_KEYS)
    if prompt:
        matches = related(env, project_dir(env, payload), prompt)
        if matches:
            return recall_nudge(matches)
    return WRITE_NUDGE


def main(argv: list[str]) -> int:
    shape = (lambda text: context_json(text, **{"continue": True})) if "--json" in argv else (lambda text: text)
    return respond(WRITE_NUDGE, lambda env: nudge_text(env, read_payload(sys.stdin)), shape)
