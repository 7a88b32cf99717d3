"""What the agent-host hooks share: reading the host's JSON payload, where
the session's project is, and answering within a hard deadline.

A hook never delays the user's prompt by more than the deadline
(THATCH_HOOK_DEADLINE seconds, default 1.5), counted from when the process
started (interpreter start-up and imports take a good part of it on a
loaded machine): a watchdog thread writes the fallback answer (a static
reminder, or nothing) and ends the process when the real answer is late,
whatever the main thread is stuck in (a payload that never ends, a locked
database, a slow daemon). Exactly one answer is written, in one write.
Hooks always exit 0.
"""

from __future__ import annotations

import json
import os
import sys
import threading

from .deadline import MAX_PAYLOAD_BYTES, remaining, write_answer

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing: ~2 ms on every hot path (tests/hot checks)
if TYPE_CHECKING:
    from typing import Any, Callable, Mapping

PROMPT_KEYS = ("prompt", "message", "text", "user_input", "input")


def read_payload(stream=None) -> dict:
    """The host's JSON object on stdin; {} for a terminal, empty or
    non-JSON input, or one larger than MAX_PAYLOAD_BYTES."""
    stream = stream if stream is not None else sys.stdin
    try:
        if stream is None or stream.isatty():
            return {}
        data = stream.buffer.read(MAX_PAYLOAD_BYTES + 1)
    except (OSError, ValueError, AttributeError):
        return {}
    return parse_payload(data)


def parse_payload(data: bytes) -> dict:
    """read_payload's answer for the bytes a host wrote (hot/relay.py reads them itself)."""
    if not data or len(data) > MAX_PAYLOAD_BYTES:
        return {}
    try:
        payload = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return {}
    return payload if isinstance(payload, dict) else {}


def text_field(payload: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first of `keys` whose value is a non-empty string."""
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def session_id(payload: Mapping[str, Any]) -> str | None:
    """Claude Code and Codex send session_id, Cursor conversation_id."""
    return text_field(payload, ("session_id", "conversation_id"))


def respond(fallback: str, compute: Callable[[Mapping[str, str]], str],
            shape: Callable[[str], str] = lambda text: text) -> int:
    """Run a hook: print shape(compute(env)), or shape(fallback) on any error
    or past the deadline; always exit status 0."""
    env = os.environ
    answer = Answer(remaining(env), shape(fallback))
    answer.give(shape(computed(fallback, compute, env)))
    return 0


def computed(fallback: str, compute: Callable[[Mapping[str, str]], str], env: Mapping[str, str]) -> str:
    """compute(env), or `fallback` on any error (raised with THATCH_DEBUG set).
    What respond() prints, and what a daemon answers for a relayed hook."""
    try:
        return compute(env)
    except Exception:
        if env.get("THATCH_DEBUG"):
            raise
        return fallback


class Answer:
    """Writes one answer: the one given in time, else the fallback at the deadline."""

    def __init__(self, seconds: float, fallback: str) -> None:
        self.fallback = fallback
        self._lock = threading.Lock()
        self._done = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            _write(self.fallback)
        os._exit(0)

    def give(self, text: str) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            self._timer.cancel()
            _write(text)


def encoded(text: str) -> bytes:
    """The bytes a hook writes for `text`: nothing for nothing, else one line-terminated text."""
    if not text:
        return b""
    return (text if text.endswith("\n") else text + "\n").encode("utf-8", "replace")


def _write(text: str) -> None:
    write_answer(encoded(text))


# The hosts whose hook output thatch shapes (`--host NAME`); the original
# thatch's `--json` is Cursor's shape.
HOSTS = ("claude", "codex", "cursor")


def host_option(argv: list[str]) -> str | None:
    """The host named by `--host NAME` (or `--host=NAME`), "cursor" for
    `--json`, None for neither or an unknown name (plain text, which every
    host accepts from thatch: it never starts with `{` or `[`)."""
    host = "cursor" if "--json" in argv else None
    for index, token in enumerate(argv):
        if token == "--host" and index + 1 < len(argv):
            host = argv[index + 1]
        elif token.startswith("--host="):
            host = token.split("=", 1)[1]
    return host if host in HOSTS else None


def shaper(host: str | None, event: str, **cursor_extra: Any) -> Callable[[str], str]:
    """How a hook's text reaches the model in `host`, for the hook `event`
    (Claude Code's and Codex's name for it):

    - Claude Code and Codex: `{"hookSpecificOutput": {"hookEventName":
      EVENT, "additionalContext": TEXT}}`, the JSON both document; Codex
      rejects any other JSON (its output schemas forbid unknown keys) and
      parses any stdout starting with `{` or `[` as JSON;
    - Cursor: `{"additional_context": TEXT}` plus `cursor_extra`;
    - no host: the text itself.

    Nothing to say is no output at all (Cursor still gets `cursor_extra`)."""
    if host in ("claude", "codex"):
        def hook_json(text: str) -> str:
            if not text:
                return ""
            return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}},
                              ensure_ascii=False)
        return hook_json
    if host == "cursor":
        def cursor_json(text: str) -> str:
            payload = dict(cursor_extra)
            if text:
                payload["additional_context"] = text
            return json.dumps(payload, ensure_ascii=False) if payload else ""
        return cursor_json
    return lambda text: text
