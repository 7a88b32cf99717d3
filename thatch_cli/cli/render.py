"""Output helpers shared by the command modules: terminal tables that fit
the window, their tab-separated form for pipes, colour, plurals.

A table on a terminal is one row per record whatever the width: columns
take their natural width, and when the row is too wide the flexible ones
(snippets first, then labels) give way, cut on a word with "…". Columns
marked `whole` (timestamps, scores) are never cut. No line ends in spaces.
Standard library only: a light command prints its table without paying
for rich (~40 ms to import).
"""

from __future__ import annotations

import unicodedata

from ..support.textsafe import visible
from .output import Output

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from typing import Sequence

GAP = "  "
ELLIPSIS = "…"

# SGR styles: what each kind of cell looks like in colour (NO_COLOR, TERM=dumb
# and pipes get none; see Output.color).
STYLES = {
    "header": "1",  # bold
    "title": "1",
    "label": "1",  # bold: what a row is about
    "store": "36",  # cyan
    "branch": "35",  # magenta
    "score": "32",  # green
    "dim": "2",
    "warn": "33",  # yellow
    "error": "31",
}


def label_text(memory) -> str:
    """A memory's label for a table cell, with the flags set on it
    (memory/fields.py) after it."""
    flags = memory.flags()
    return memory.label + (f" ({', '.join(flags)})" if flags else "")


def paint(out: Output, text: str, style: str | None) -> str:
    """`text` in `style` when `out` shows colour; as it is otherwise."""
    if not style or not out.color or not text:
        return text
    return f"\x1b[{STYLES[style]}m{text}\x1b[0m"


def width_of(text: str) -> int:
    """How many terminal cells `text` takes: wide East Asian characters take
    two, combining marks none."""
    if text.isascii():
        return len(text)
    cells = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        cells += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return cells


def cut(text: str, cells: int) -> str:
    """`text` within `cells` terminal cells: whole when it fits, else cut on
    the last word boundary that keeps most of it (else mid-word) and ended
    with "…"."""
    if width_of(text) <= cells:
        return text
    if cells <= 1:
        return ELLIPSIS[:cells]
    room, kept, used = cells - 1, [], 0
    for ch in text:
        size = width_of(ch)
        if used + size > room:
            break
        kept.append(ch)
        used += size
    head = "".join(kept)
    space = head.rfind(" ")
    if space >= room * 0.6:
        head = head[:space]
    return head.rstrip() + ELLIPSIS


def cut_keeping_mark(text: str, cells: int) -> str:
    """`text` within `cells` like cut(), but a mark at its end (" (pinned)",
    label_text's flags) stays whole and the words before it give way: the
    mark is what a reader scans the column for."""
    import re

    found = re.search(r" \([a-z_]+(?:, [a-z_]+)*\)$", text) if width_of(text) > cells else None
    if found is None or found.start() == 0 or width_of(found.group()) + 2 > cells:
        return cut(text, cells)
    return cut(text[:found.start()], cells - width_of(found.group())) + found.group()


class Column:
    """One column of a terminal table: its header, the style of its cells,
    whether it may be cut (`whole` columns never are), how far it may
    shrink (`least`: cells, or below 1 a share of the window), which
    gives way first when the row is too wide (higher `give` first), and
    whether a cut keeps the mark at the end of a cell (`marks`)."""

    __slots__ = ("header", "style", "whole", "least", "give", "right", "marks")

    def __init__(self, header: str, style: str | None = None, *, whole: bool = False, least: float = 8,
                 give: int = 0, right: bool = False, marks: bool = False) -> None:
        self.header, self.style, self.whole, self.least, self.give, self.right, self.marks = (
            header, style, whole, least, give, right, marks)


def _widths(columns: Sequence[Column], rows: Sequence[Sequence[str]], room: int) -> list[int]:
    natural = [max([width_of(c.header)] + [width_of(row[i]) for row in rows]) for i, c in enumerate(columns)]
    widths = list(natural)
    least = [min(natural[i], max(int(c.least * room) if c.least < 1 else c.least, width_of(c.header)))
             for i, c in enumerate(columns)]
    excess = sum(widths) + len(GAP) * (len(widths) - 1) - room
    # The most giving columns shrink first; within one level the widest
    # gives a cell at a time, so the columns that give end up balanced.
    # Still too wide: the same order again, down to a few cells (or the header) each.
    for floor in (least, [width_of(c.header) if c.whole else min(natural[i], 4) for i, c in enumerate(columns)]):
        for give in sorted({c.give for c in columns if not c.whole}, reverse=True):
            level = [i for i, c in enumerate(columns) if not c.whole and c.give == give]
            while excess > 0:
                able = [i for i in level if widths[i] > floor[i]]
                if not able:
                    break
                widest = max(able, key=lambda i: widths[i])
                widths[widest] -= 1
                excess -= 1
    return widths


def table(out: Output, columns: Sequence[Column], rows: Sequence[Sequence[str | tuple[str, str | None]]],
          title: str | None = None) -> None:
    """A borderless table of plain-text cells, one line per row, within the
    terminal's width (Output.width). A cell is text, or (text, style) to
    style it apart from its column. Columns that are empty in every row are
    left out."""
    texts = [[visible((cell[0] if isinstance(cell, tuple) else cell) or "", keep="") for cell in row] for row in rows]
    styles = [[cell[1] if isinstance(cell, tuple) else column.style for cell, column in zip(row, columns)]
              for row in rows]
    shown = [i for i in range(len(columns)) if i == 0 or any(row[i] for row in texts)]
    columns = [columns[i] for i in shown]
    texts = [[row[i] for i in shown] for row in texts]
    styles = [[row[i] for i in shown] for row in styles]
    widths = _widths(columns, texts, out.width)
    lines = [paint(out, cut(visible(title, keep=""), out.width), "title")] if title else []
    header: tuple[list[str], list[str | None]] = ([c.header for c in columns], ["header"] * len(columns))
    for row, row_styles in [header, *zip(texts, styles)]:
        cells = []
        for i, column in enumerate(columns):
            text = (cut_keeping_mark if column.marks else cut)(row[i], widths[i])
            pad = " " * (widths[i] - width_of(text))
            styled = paint(out, text, row_styles[i])
            cells.append(pad + styled if column.right else styled + ("" if i == len(columns) - 1 else pad))
        lines.append(GAP.join(cells).rstrip())
    out.stdout.write("\n".join(lines) + "\n")


def tsv(out: Output, rows: Sequence[Sequence[object]]) -> None:
    """The rows of a table as tab-separated lines, for pipes and NO_COLOR-less
    scripts: the terminal table's columns, no header, one record per line
    (each field on one line, so `cut -f` and `awk -F'\t'` can rely on it)."""
    out.lines([_tsv_line(row) for row in rows])


def _tsv_line(row: Sequence[object]) -> str:
    line = "\t".join("" if field is None else str(field) for field in row)
    if line.count("\t") == len(row) - 1 and not any(ch in line for ch in "\n\r\v\f"):
        return line  # the common case: no field holds a tab or a line break
    return "\t".join("" if field is None else str(field).translate(_BREAKS) for field in row)


# A field's own line breaks and tabs become spaces (out.lines escapes any other control character).
_BREAKS = {ord(ch): " " for ch in "\t\n\r\v\f"}


def items(out: Output, parts: Sequence[tuple[str, str | None]], sep: str = " · ", room: int | None = None) -> list[str]:
    """`parts` ((text, style) pairs) joined by `sep` on as few lines as fit
    `room` (default: the window), each part whole (a timestamp is never split)."""
    room = out.width if room is None else room
    lines: list[str] = []
    line, used = "", 0
    for text, style in parts:
        text = visible(text, keep="")
        if not text:
            continue
        size = width_of(text)
        if used and used + len(sep) + size > room:
            lines.append(line)
            line, used = "", 0
        if used:
            line, used = line + sep, used + len(sep)
        line, used = line + paint(out, text, style), used + size
    if used:
        lines.append(line)
    return lines


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def section(out: Output, title: str) -> None:
    out.stdout.write(paint(out, visible(title, keep=""), "title" if out.rich else None) + "\n")
