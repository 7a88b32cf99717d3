"""The one rule for showing stored text on a terminal or in a pipe: control
characters never reach the reader raw. Labels, content, branch names and
store names come from outside (an agent, a crafted HEAD, a remote URL), and
a terminal obeys an escape sequence it is sent. JSON output keeps the exact
text; everything else goes through here. Standard library only: the hot
paths use it too."""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}"


def is_control(ch: str) -> bool:
    """C0, DEL and C1 control characters."""
    code = ord(ch)
    return code < 32 or 127 <= code < 160


def visible(text: str, keep: str = "\n\t") -> str:
    """`text` with every control character except those in `keep` shown as
    an escape (ESC becomes the four characters \\x1b)."""
    if _CONTROL.search(text) is None:
        return text
    return "".join(ch if ch in keep or not is_control(ch) else _escape(ch) for ch in text)


def one_line(text: str) -> str:
    """`text` on one line: whitespace runs (newlines and tabs included)
    become one space, other control characters are escaped."""
    spaced = text.translate(_WHITESPACE) if any(ch in _WHITESPACE_CHARS for ch in text) else text
    return " ".join(visible(spaced, keep="").split())


_WHITESPACE_CHARS = "\n\r\t\v\f"
_WHITESPACE = {ord(ch): " " for ch in _WHITESPACE_CHARS}


_SAFE_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")


def shell_word(text: str) -> str:
    """`text` as one word for a command line a user may copy (POSIX shell
    quoting, control characters escaped as well)."""
    if text and all(ch in _SAFE_WORD for ch in text):
        return text
    return "'" + visible(text, keep="").replace("'", "'\\''") + "'"
