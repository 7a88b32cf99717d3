"""The one rule for showing stored text on a terminal, in a pipe or in an
agent's context: control characters never reach the reader raw. Labels,
content, branch names and store names come from outside (an agent, a
crafted HEAD, a remote URL), and a terminal obeys an escape sequence it is
sent. Invisible format characters count too: bidi overrides and isolates
reorder what a reader sees (a memory can show one command and hold
another), zero-width ones hide text. JSON keeps the exact text, with those
characters written as \\u escapes (`json_safe`), which decode to the same
string; everything else goes through here. Standard library only: the hot
paths use it too."""

from __future__ import annotations

import re

_PATTERNS: dict[str, re.Pattern[str]] = {}

# Invisible characters that change what a reader sees: the Arabic letter
# mark, zero-width space/joiners and the LRM/RLM marks, the bidi embeddings
# and overrides (U+202A-202E), the line and paragraph separators, word
# joiner and invisible operators, the bidi isolates (U+2066-2069), the
# deprecated format controls, the byte order mark used as a zero-width
# no-break space, and the interlinear annotation marks.
FORMAT_CHARS = "".join(chr(c) for c in (0x061C, 0x180E, *range(0x200B, 0x2010), *range(0x2028, 0x202F),
                                        *range(0x2060, 0x2065), *range(0x2066, 0x2070), 0xFEFF,
                                        *range(0xFFF9, 0xFFFC)))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _controls(keep: str) -> re.Pattern[str]:
    """A pattern matching every control and format character except those in `keep`."""
    pattern = _PATTERNS.get(keep)
    if pattern is None:
        wanted = "".join(re.escape(chr(c)) for c in (*range(32), *range(127, 160)) if chr(c) not in keep)
        pattern = _PATTERNS[keep] = re.compile(f"[{wanted}{FORMAT_CHARS}]")
    return pattern


def json_safe(text: str) -> str:
    """JSON text (from json.dumps, which already escapes C0 controls) with
    DEL, the C1 controls and the format characters above written as \\u
    escapes: safe on a terminal, and still exactly the same data once
    parsed (those characters can only occur inside strings)."""
    pattern = _PATTERNS.get("json")
    if pattern is None:  # compiled on first use: the hooks never write JSON through here
        pattern = _PATTERNS["json"] = re.compile("[" + "".join(re.escape(chr(c)) for c in range(127, 160))
                                                 + FORMAT_CHARS + "]")
    return pattern.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def visible(text: str, keep: str = "\n\t") -> str:
    """`text` with every control character except those in `keep` shown as
    an escape (ESC becomes the four characters \\x1b)."""
    return _controls(keep).sub(_escape, text)


def one_line(text: str) -> str:
    """`text` on one line: whitespace runs (newlines and tabs included)
    become one space, other control characters are escaped."""
    spaced = text.translate(_WHITESPACE) if any(ch in _WHITESPACE_CHARS for ch in text) else text
    return " ".join(visible(spaced, keep="").split())


_WHITESPACE_CHARS = "\n\r\t\v\f"
_WHITESPACE = {ord(ch): " " for ch in _WHITESPACE_CHARS}


_SAFE_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")


def shell_word(text: str, *, exact: bool = False) -> str:
    """`text` as one word for a command line (POSIX shell quoting): one a
    user may copy, control characters escaped as well; or, `exact`, one a
    program will run, every character kept."""
    if text and all(ch in _SAFE_WORD for ch in text):
        return text
    return "'" + (text if exact else visible(text, keep="")).replace("'", "'\\''") + "'"
