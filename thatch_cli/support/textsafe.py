"""The one rule for showing stored text on a terminal, in a pipe or in an
agent's context: control characters never reach the reader raw. Labels,
content, branch names and store names come from outside (an agent, a
crafted HEAD, a remote URL), and a terminal obeys an escape sequence it is
sent. Invisible format characters count too: bidi overrides and isolates
reorder what a reader sees (a memory can show one command and hold
another), zero-width ones and the tag characters hide text a model still
reads, a soft hyphen or variation selector hides inside a word. Which
characters count is derived from Unicode's categories (`hidden`). JSON
keeps the exact text, with those
characters written as \\u escapes (`json_safe`), which decode to the same
string; everything else goes through here. Standard library only
(unicodedata is a small C module): the hot paths use it too."""

from __future__ import annotations

import unicodedata

TYPE_CHECKING = False  # typing.TYPE_CHECKING would import typing on every hot path
if TYPE_CHECKING:
    from collections.abc import Callable

# Which characters are hidden is Unicode's call, not a hand list: every
# control (Cc), format (Cf: bidi controls, zero-width characters, the soft
# hyphen, the tag characters U+E0001-E007F ...), surrogate (Cs), private-use
# (Co) and unassigned (Cn, which covers the rest of the tag block) character,
# the line and paragraph separators (Zl, Zp), and the default-ignorable
# characters of other categories: variation selectors (U+FE00-FE0F,
# U+E0100-E01EF, the Mongolian ones), fillers (Hangul) and the combining
# grapheme joiner, found by their Unicode names.
_HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))
_IGNORABLE_NAMES = ("VARIATION SELECTOR", "FILLER", "COMBINING GRAPHEME JOINER", "KHMER VOWEL INHERENT")


def hidden(ch: str) -> bool:
    """Whether a reader cannot see `ch` as itself (a control, or an
    invisible or default-ignorable character)."""
    if unicodedata.category(ch) in _HIDDEN_CATEGORIES:
        return True
    if ch.isascii() or unicodedata.category(ch)[0] not in "ML":
        return False
    name = unicodedata.name(ch, "")
    return any(part in name for part in _IGNORABLE_NAMES)


def _escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _json_escape(code: int) -> str:
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON spells a character past U+FFFF as its UTF-16 surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class _Table(dict[int, str]):
    """A str.translate table that classifies each character the first time
    it is met: escaped when hidden and not kept, itself otherwise. Lazy,
    not a regular expression or a table of all 1.1 million code points:
    `re` (with enum) costs a light command several milliseconds to import,
    and translate is as fast."""

    def __init__(self, keep: str, escape: Callable[[int], str]) -> None:
        super().__init__()
        self.keep, self.escape = keep, escape

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        value = self.escape(code) if ch not in self.keep and hidden(ch) else ch
        self[code] = value
        return value


_TABLES: dict[str, _Table] = {}


def _table(keep: str) -> _Table:
    table = _TABLES.get(keep)
    if table is None:
        table = _TABLES[keep] = _Table(keep, _escape)
    return table


# json.dumps already escapes the C0 controls, quotes and backslashes; the
# rest of the hidden characters can only occur inside its strings.
_JSON_KEEP = "".join(map(chr, range(32))) + '"\\'


def json_safe(text: str) -> str:
    """JSON text (from json.dumps) with every other hidden character written
    as a \\u escape: safe on a terminal, and still exactly the same data once
    parsed."""
    table = _TABLES.get("json")
    if table is None:
        table = _TABLES["json"] = _Table(_JSON_KEEP, _json_escape)
    return text.translate(table)


def visible(text: str, keep: str = "\n\t") -> str:
    """`text` with every hidden character except those in `keep` shown as an
    escape (ESC becomes the four characters \\x1b, U+E0041 \\U000e0041)."""
    return text.translate(_table(keep))


def one_line(text: str) -> str:
    """`text` on one line: whitespace runs (newlines and tabs included)
    become one space, other control characters are escaped."""
    spaced = text.translate(_WHITESPACE) if any(ch in _WHITESPACE_CHARS for ch in text) else text
    return " ".join(visible(spaced, keep="").split())


def snippet(text: str, width: int) -> str:
    """`text` on one line, cut to `width` characters with "…" after the last
    whole word that keeps most of it (else mid-word: one long token). Only
    its start is read: a listing of 10,000 memories must not split 10,000
    whole texts."""
    head = text[: 4 * width + 1]
    line = " ".join(head.split())
    if len(line) < width and len(head) < len(text):  # mostly whitespace so far: say there is more
        return line + "…"
    if len(line) <= width:
        return line
    kept = line[: width - 1]
    space = kept.rfind(" ") if line[width - 1] != " " else width - 1
    if space >= (width - 1) * 0.6:
        kept = kept[:space]
    return kept.rstrip() + "…"


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
