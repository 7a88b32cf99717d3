"""The one rule for showing stored text on a terminal or in a pipe: control
characters never reach the reader raw. Labels, content, branch names and
store names come from outside (an agent, a crafted HEAD, a remote URL), and
a terminal obeys an escape sequence it is sent. JSON output keeps the exact
text; everything else goes through here. Standard library only: the hot
paths use it too."""

from __future__ import annotations

# keep -> a str.translate table escaping every other control character.
# Tables, not a regular expression: `re` (with enum) costs a light command
# several milliseconds to import, and translate is as fast.
_TABLES: dict[str, dict[int, str]] = {}
_CONTROLS = (*range(32), *range(127, 160))


def _table(keep: str) -> dict[int, str]:
    table = _TABLES.get(keep)
    if table is None:
        table = _TABLES[keep] = {code: f"\\x{code:02x}" for code in _CONTROLS if chr(code) not in keep}
    return table


def visible(text: str, keep: str = "\n\t") -> str:
    """`text` with every control character except those in `keep` shown as
    an escape (ESC becomes the four characters \\x1b)."""
    return text.translate(_table(keep))


def one_line(text: str) -> str:
    """`text` on one line: whitespace runs (newlines and tabs included)
    become one space, other control characters are escaped."""
    spaced = text.translate(_WHITESPACE) if any(ch in _WHITESPACE_CHARS for ch in text) else text
    return " ".join(visible(spaced, keep="").split())


def snippet(text: str, width: int) -> str:
    """`text` on one line, cut to `width` characters with "…" (only its start
    is read: a listing of 10,000 memories must not split 10,000 whole texts)."""
    head = text[: 4 * width + 1]
    line = " ".join(head.split())
    if len(line) < width and len(head) < len(text):  # mostly whitespace so far: say there is more
        return line + "…"
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


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
