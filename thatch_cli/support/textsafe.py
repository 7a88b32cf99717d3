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

# Invisible characters that change what a reader sees: the Arabic letter
# mark, zero-width space/joiners and the LRM/RLM marks, the bidi embeddings
# and overrides (U+202A-202E), the line and paragraph separators, word
# joiner and invisible operators, the bidi isolates (U+2066-2069), the
# deprecated format controls, the byte order mark used as a zero-width
# no-break space, and the interlinear annotation marks.
_FORMAT = (0x061C, 0x180E, *range(0x200B, 0x2010), *range(0x2028, 0x202F), *range(0x2060, 0x2065),
           *range(0x2066, 0x2070), 0xFEFF, *range(0xFFF9, 0xFFFC))
_CONTROLS = (*range(32), *range(127, 160))

# keep -> a str.translate table escaping every other control and format
# character. Tables, not a regular expression: `re` (with enum) costs a
# light command several milliseconds to import, and translate is as fast.
_TABLES: dict[str, dict[int, str]] = {}


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _table(keep: str) -> dict[int, str]:
    table = _TABLES.get(keep)
    if table is None:
        table = _TABLES[keep] = {code: _escape(code) for code in (*_CONTROLS, *_FORMAT) if chr(code) not in keep}
    return table


def json_safe(text: str) -> str:
    """JSON text (from json.dumps, which already escapes C0 controls) with
    DEL, the C1 controls and the format characters above written as \\u
    escapes: safe on a terminal, and still exactly the same data once
    parsed (those characters can only occur inside strings)."""
    table = _TABLES.get("json")
    if table is None:
        table = _TABLES["json"] = {code: f"\\u{code:04x}" for code in (*range(127, 160), *_FORMAT)}
    return text.translate(table)


def visible(text: str, keep: str = "\n\t") -> str:
    """`text` with every control and format character except those in
    `keep` shown as an escape (ESC becomes the four characters \\x1b)."""
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
