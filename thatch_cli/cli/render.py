"""Output helpers shared by the command modules: rich tables and markup
escaping, plurals, and the short labels lists people read."""

from __future__ import annotations

from ..textsafe import visible
from .output import Output

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Sequence


def esc(text: str) -> str:
    """`text` safe inside rich markup and on a terminal."""
    from rich.markup import escape

    return escape(visible(text))


def table(out: Output, columns: Sequence[str], rows: Sequence[Sequence[str]], title: str | None = None) -> None:
    """A borderless rich table; cells are already escaped (esc) or our own text."""
    from rich.table import Table

    grid = Table(title=title, title_justify="left", header_style="bold", box=None, pad_edge=False)
    for column in columns:
        grid.add_column(column, overflow="fold")
    for row in rows:
        grid.add_row(*row)
    out.console.print(grid)


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


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def section(out: Output, title: str) -> None:
    if out.rich:
        out.console.print(f"[bold]{esc(title)}[/]")
    else:
        out.line(title)
