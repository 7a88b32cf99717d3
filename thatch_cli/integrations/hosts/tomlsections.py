"""A TOML file as the sections a person sees: the text before the first
table header, then each `[table]` or `[[array.of.tables]]` header with the
lines up to the next header. Setup edits Codex's config.toml section by
section (replace one in place, remove one, append some), so every byte
outside thatch's own sections stays as the user and Codex wrote it,
wherever Codex has moved thatch's tables since.

Only headers are parsed here (their dotted keys, bare or quoted); values
are read with tomllib, and codex.py checks the meaning of every edited file
against the meaning it expected, so a splice this scanner got wrong is
refused rather than written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADER = re.compile(r"^[ \t]*(\[\[?)(.*?)(\]\]?)[ \t]*(#.*)?$")
_BARE = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Section:
    start: int  # offset of the header line (0 and no header for the preamble)
    end: int  # offset of the next header line, or the end of the text
    path: tuple[str, ...]  # () for the preamble
    array: bool  # [[...]]

    def text(self, source: str) -> str:
        return source[self.start:self.end]


def parse_key(text: str) -> tuple[str, ...] | None:
    """The dotted key of a header (`a."b.c".'d'` -> ("a", "b.c", "d")); None when it is not one."""
    parts, pos, text = [], 0, text.strip()
    while pos < len(text):
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if text.startswith('"', pos):
            end, value = _basic_string(text, pos)
            if end is None:
                return None
        elif text.startswith("'", pos):
            end = text.find("'", pos + 1)
            if end < 0:
                return None
            value, end = text[pos + 1:end], end + 1
        else:
            found = _BARE.match(text, pos)
            if not found:
                return None
            value, end = found.group(), found.end()
        parts.append(value)
        pos = end
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        if pos < len(text):
            if text[pos] != ".":
                return None
            pos += 1
            if pos >= len(text):
                return None
    return tuple(parts) if parts else None


def _basic_string(text: str, pos: int) -> tuple[int | None, str]:
    import json

    end = pos + 1
    while end < len(text):
        if text[end] == "\\":
            end += 2
            continue
        if text[end] == '"':
            try:
                return end + 1, json.loads(text[pos:end + 1])
            except ValueError:
                return None, ""
        end += 1
    return None, ""


def sections(text: str) -> list[Section]:
    """The preamble, then every header's section, in order."""
    starts: list[tuple[int, tuple[str, ...], bool]] = []
    offset, in_string = 0, None
    for line in text.splitlines(keepends=True):
        if in_string is None:
            header = _HEADER.match(line.rstrip("\r\n"))
            path = parse_key(header.group(2)) if header and len(header.group(1)) == len(header.group(3)) else None
            if header and path is not None:
                starts.append((offset, path, header.group(1) == "[["))
        in_string = _multiline_state(line, in_string)
        offset += len(line)
    found = [Section(0, starts[0][0] if starts else len(text), (), False)]
    for index, (start, path, array) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(text)
        found.append(Section(start, end, path, array))
    return found


def _multiline_state(line: str, state: str | None) -> str | None:
    """Whether a multi-line string (''' or \"\"\") is still open after `line`."""
    pos = 0
    while True:
        if state is None:
            hits = [(line.find(q, pos), q) for q in ('"""', "'''")]
            hits = [(i, q) for i, q in hits if i >= 0 and "#" not in line[:i]]
            if not hits:
                return None
            index, quote = min(hits)
            state, pos = quote, index + 3
        else:
            index = line.find(state, pos)
            while state == '"""' and index > 0 and line[index - 1] == "\\":
                index = line.find(state, index + 1)
            if index < 0:
                return state
            state, pos = None, index + 3
