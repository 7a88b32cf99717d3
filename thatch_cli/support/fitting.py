"""The one rule for fitting output into N characters, whoever reads it:
`recall --budget` on the command line, an MCP tool result, the text a hook
puts in an agent's context.

1. Whole items stay, best first: each list keeps the most of its leading
   items that fit (found by halving, since the output only grows with the
   items kept). Lists are trimmed in the order given, the least important
   first, each with the ones before it trimmed and the ones after it whole.
2. Only when that is not enough (one item alone is too long) is a text cut,
   as little as needed, ending with CUT.
3. The caller says what was left out, in the output itself.

Standard library only: the hooks use it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a hook ~2 ms
if TYPE_CHECKING:
    from typing import Callable, Sequence

CUT = "…"


def most(count: int, fits: Callable[[int], bool], least: int = 0) -> int:
    """The largest k in [least, count] for which fits(k) holds (fits must
    hold up to some k and fail after it); `least` when none does."""
    low, high = least, count
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def keep(counts: Sequence[int], fits: Callable[[list[int]], bool], order: Sequence[int] | None = None,
         least: Sequence[int] | None = None) -> list[int]:
    """How many leading items of each list to keep (rule 1): `counts` are
    the lists' lengths, `fits(kept)` says whether output holding that many
    of each fits, `order` the lists to trim, first trimmed first (default:
    all, in order), `least` the fewest each may keep (default 0)."""
    kept = list(counts)
    for index in order if order is not None else range(len(counts)):
        if fits(kept):
            break
        floor = least[index] if least is not None else 0
        # most() calls the lambda before the loop moves on, so it may read `index` late.
        kept[index] = most(counts[index], lambda k: fits(kept[:index] + [k] + kept[index + 1:]), floor)
    return kept


def cut(text: str, fits: Callable[[str], bool]) -> tuple[str, int]:
    """`text`, or its longest start followed by CUT for which fits() holds
    (rule 2); with how many of its characters were kept."""
    if fits(text):
        return text, len(text)
    shown = most(len(text) - 1, lambda k: fits(text[:k] + CUT))
    return text[:shown] + CUT, shown


def prefix(text: str, limit: int) -> str:
    """`text` within `limit` characters: whole, or cut with CUT (the plain case of `cut`)."""
    return text if len(text) <= limit else text[: max(0, limit - len(CUT))] + CUT
