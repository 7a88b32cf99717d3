"""The one rule for showing stored text on a terminal or in a pipe: control
characters never reach the reader raw. Labels, content, branch names and
store names come from outside (an agent, a crafted HEAD, a remote URL), and
a terminal obeys an escape sequence it is sent. JSON output keeps the exact
text; everything else goes through here. Standard library only: the hot
paths use it too."""

from __future__ import annotations

import re

_PATTERNS: dict[str, re.Pattern[str]] = {}


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}"


# Bidirectional formatting characters: they reorder what a terminal shows
# (a label can read one way and be another), so they are shown as escapes too.
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))


def _controls(keep: str) -> re.Pattern[str]:
    """A pattern matching every control character except those in `keep`."""
    pattern = _PATTERNS.get(keep)
    if pattern is None:
        wanted = "".join(re.escape(chr(c)) for c in (*range(32), *range(127, 160), *_BIDI) if chr(c) not in keep)
        pattern = _PATTERNS[keep] = re.compile(f"[{wanted}]")
    return pattern


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
