"""Output helpers shared by the command modules: rich tables and markup
escaping, plurals, and the short labels lists people read."""

from __future__ import annotations

from typing import Sequence

from ..textsafe import one_line, visible
from .output import Output


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
    out.lines(["\t".join(one_line("" if field is None else str(field)) for field in row) for row in rows])


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def section(out: Output, title: str) -> None:
    if out.rich:
        out.console.print(f"[bold]{esc(title)}[/]")
    else:
        out.line(title)
