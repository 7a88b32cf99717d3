"""A search's or a listing's filter (memory/filter.py) as SQL: the one place
it becomes a condition on `entries`."""

from __future__ import annotations

from ..memory.fields import BY_NAME, SEPARATOR
from .fastread import LIVE

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2.5 ms to import typing
if TYPE_CHECKING:
    from ..memory.filter import Filter


def conditions(where: Filter, prefix: str = "") -> tuple[str, list[str]]:
    """The condition (with its parameters) keeping the rows of `entries`
    that `where` keeps, its stores aside (the caller names them where they
    narrow its query best). `prefix` qualifies the columns ("e.")."""
    parts, args = ["1"], []
    if where.branch_only:
        parts.append(f"{prefix}branch = ?")
        args.append(where.branch or "")
    elif not where.any_branch:
        branch = f"{prefix}branch"
        parts.append(f"({branch} IS NULL OR {branch} = '' OR {branch} = ?)")
        args.append(where.branch or "")
    if where.only_archived:
        parts.append(f"NOT {prefix}{LIVE}")
    elif not where.archived:
        parts.append(f"{prefix}{LIVE}")
    for name, value in sorted(where.fields.items()):
        column = prefix + BY_NAME[name].column
        if isinstance(value, tuple):  # a list field holding every item
            for item in value:
                parts.append(f"instr({column}, ?) > 0")
                args.append(SEPARATOR + item + SEPARATOR)
        else:  # a flag that is set
            parts.append(f"{column} = 1")
    for store, slug in sorted(where.exclude):
        parts.append(f"NOT ({prefix}store = ? AND {prefix}slug = ?)")
        args += [store, slug]
    return " AND ".join(parts), args
