"""A block of text thatch owns inside someone else's file, between two
marker lines: the instruction block of CLAUDE.md / AGENTS.md, and the
tables of a Codex config.toml. Setup replaces only the block (or appends it,
after a blank line); uninstall removes the block and the separator setup
added, giving back the file as it was."""

from __future__ import annotations

from dataclasses import dataclass


class Broken(ValueError):
    """A begin marker without its end marker: the file was edited by hand,
    and rewriting it could destroy what follows the marker."""


@dataclass(frozen=True)
class Markers:
    begin: str  # the first line of the block starts with this
    end: str  # the last line of the block is exactly this
    begin_line: str  # the first line setup writes

    def find(self, text: str) -> tuple[int, int] | None:
        """(start, end) of the block, its final newline included; None when absent."""
        start = _line_starting(text, self.begin)
        if start is None:
            return None
        position = start
        while True:
            position = text.find(self.end, position)
            if position < 0:
                raise Broken(f"{self.begin!r} has no matching {self.end!r}")
            line_end = position + len(self.end)
            at_line_start = position == 0 or text[position - 1] == "\n"
            newline = "\r\n" if text.startswith("\r\n", line_end) else "\n"  # an editor may have made it CRLF
            if at_line_start and (line_end == len(text) or text.startswith(newline, line_end)):
                return start, min(line_end + len(newline), len(text))
            position = line_end

    def wrap(self, body: str) -> str:
        return f"{self.begin_line}\n{body.rstrip(chr(10))}\n{self.end}\n"


def _line_starting(text: str, prefix: str) -> int | None:
    position = 0
    while True:
        position = text.find(prefix, position)
        if position < 0:
            return None
        if position == 0 or text[position - 1] == "\n":
            return position
        position += len(prefix)


def separator(text: str) -> str:
    """What goes between existing text and an appended block: nothing for an
    empty file, else enough newlines for one blank line."""
    if not text or text.endswith("\n\n"):
        return ""
    return "\n" if text.endswith("\n") else "\n\n"


def put(text: str, markers: Markers, body: str) -> tuple[str, str | None]:
    """(new text, separator added) with the block set to `body`: replaced in
    place when present (separator None), else appended."""
    block = markers.wrap(body)
    found = markers.find(text)
    if found is not None:
        start, end = found
        return text[:start] + block + text[end:], None
    added = separator(text)
    return text + added + block, added


def remove(text: str, markers: Markers, added: str | None) -> str:
    """`text` without the block, and without the separator setup added
    before it (`added`; when unknown, one blank line)."""
    found = markers.find(text)
    if found is None:
        return text
    start, end = found
    before, after = text[:start], text[end:]
    if after:
        return before + after
    if added is None:
        added = "\n" if before.endswith("\n\n") else ""
    for candidate in (added.replace("\n", "\r\n"), added):  # the file may have turned CRLF since
        if candidate and before.endswith(candidate):
            return before[: len(before) - len(candidate)]
    return before

