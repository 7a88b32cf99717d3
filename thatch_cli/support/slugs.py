"""Labels and slugs, byte-compatible with the original thatch so both tools
address the same rows of a shared database."""

from __future__ import annotations

import unicodedata

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    import re  # compiled on first use (only writes need it)

DERIVED_LABEL_CHARS = 80
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
# JavaScript's whitespace (String.prototype.trim and /\s/): not Python's,
# which adds U+001C-U+001F and U+0085 and leaves out the BOM (U+FEFF).
_TRIM = " \t\n\r\x0b\x0c\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_SPACE = frozenset(_TRIM)


def _keep(ch: str) -> bool:
    return ch in "-_" or unicodedata.category(ch)[0] in "LN"


def _label_hash(label: str) -> str:
    h = 0
    for ch in label:
        h = (h * 31 + ord(ch)) % 2**32
    digits = ""
    while True:
        h, rem = divmod(h, 36)
        digits = _BASE36[rem] + digits
        if h == 0:
            return digits


def _dashed(text: str) -> str:
    r"""Every run of (JavaScript) whitespace in `text` as one "-", what the
    original's `replace(/\s+/g, "-")` does, without importing re: `show`
    and `forget` slugify on every run."""
    out, spaced = [], False
    for ch in text:
        if ch in _JS_SPACE:
            if not spaced:
                out.append("-")
            spaced = True
        else:
            out.append(ch)
            spaced = False
    return "".join(out)


# What slugify keeps of an ASCII text, in one C pass: letters, digits, "-"
# and "_" as they are, each (JavaScript) space as "-" (runs of "-" collapse
# below either way), nothing else (no other ASCII character is a letter or
# number).
_ASCII_SPACE = " \t\n\r\x0b\x0c"
_ASCII_KEPT = {i: ("-" if chr(i) in _ASCII_SPACE else chr(i) if chr(i).isalnum() or chr(i) in "-_" else None)
               for i in range(128)}


def slugify(label: str) -> str:
    lowered = label.strip(_TRIM).lower()
    if lowered.isascii():  # most labels: a sync's big pull slugifies thousands
        text = lowered.translate(_ASCII_KEPT)
    else:
        text = "".join(ch for ch in _dashed(lowered) if _keep(ch))
    while "--" in text:
        text = text.replace("--", "-")
    return text if text else "x" + _label_hash(label)


def _heading() -> re.Pattern[str]:
    """A Markdown ATX heading line, compiled on first use (only writes need it)."""
    import re

    return re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return (cut if len(cut) >= limit // 2 else text[:limit]).rstrip() + "…"


def derive_label(content: str) -> tuple[str, str]:
    """Label from the first Markdown heading, else the first non-empty line.

    Returns (label, body). When the heading is the content's first line it is
    dropped from the body, since the stored text re-adds it as `# label`.
    """
    lines = content.splitlines()
    first_nonempty = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first_nonempty is None:
        return "", content
    heading = _heading()
    for i, line in enumerate(lines):
        match = heading.match(line)
        if match:
            label = _shorten(match.group(1), DERIVED_LABEL_CHARS)
            if i == first_nonempty and label == match.group(1).strip():
                body = "\n".join(lines[i + 1 :]).strip("\n")
                return label, body or content
            return label, content
    return _shorten(lines[first_nonempty], DERIVED_LABEL_CHARS), content


def split_heading(text: str) -> tuple[str | None, str]:
    """(heading, the rest) when the first non-empty line is a Markdown
    heading (as `thatch edit` writes the label), else (None, text)."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    match = _heading().match(lines[first]) if first is not None else None
    if first is None or match is None:
        return None, text
    return match.group(1).strip(), "\n".join(lines[first + 1 :]).strip("\n")


def passage_text(label: str, body: str) -> str:
    """The exact text stored in `content` and embedded: a re-embed needs no reconstruction."""
    return f"# {label}\n\n{body}"


def body_of(label: str, stored: str) -> str:
    prefix = f"# {label}\n\n"
    return stored.removeprefix(prefix)
