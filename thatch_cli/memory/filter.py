"""Which memories a search keeps: one value, built once by the operation,
carried as is to the in-process ranking or (as JSON) to the daemon, turned
into SQL by storage/filters.py and into the daemon's matrix mask by
ranking/dense.py. A new way of filtering is added here and in those two
renderings, not threaded through every signature between them.

Standard library only: the hot paths import the records beside it."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2.5 ms to import typing
if TYPE_CHECKING:
    from typing import Any, Iterable, Sequence


class Filter:
    """stores       the stores searched
    branch       memories without a branch are kept, plus this branch's
    any_branch   every branch's memories are kept (`branch` is then ignored)
    archived     archived memories are kept too (otherwise live ones only)
    exclude      (store, slug) pairs never returned (the memory being replaced)"""

    __slots__ = ("stores", "branch", "any_branch", "archived", "exclude")

    def __init__(self, stores: Sequence[str], *, branch: str | None = None, any_branch: bool = False,
                 archived: bool = False, exclude: Iterable[tuple[str, str]] = ()) -> None:
        self.stores: tuple[str, ...] = tuple(stores)
        self.branch = None if any_branch else branch
        self.any_branch, self.archived = any_branch, archived
        self.exclude: frozenset[tuple[str, str]] = frozenset(exclude)

    def to_json(self) -> dict[str, Any]:
        """The shape the daemon's search request carries (daemon/protocol.py)."""
        return {"stores": list(self.stores), "branch": self.branch, "any_branch": self.any_branch,
                "archived": self.archived, "exclude": sorted([store, slug] for store, slug in self.exclude)}

    @classmethod
    def from_json(cls, data: Any) -> Filter:
        """The filter to_json gave; ValueError for anything else."""
        try:
            stores, branch, exclude = data["stores"], data["branch"], data["exclude"]
            any_branch, archived = data["any_branch"], data["archived"]
            pairs = [(store, slug) for store, slug in exclude]
        except (KeyError, TypeError, ValueError):
            raise ValueError("a filter is {stores, branch, any_branch, archived, exclude}") from None
        texts = [*stores, *(p for pair in pairs for p in pair)] if isinstance(stores, list) else None
        if (texts is None or not all(isinstance(t, str) for t in texts) or not isinstance(branch, (str, type(None)))
                or not isinstance(any_branch, bool) or not isinstance(archived, bool)):
            raise ValueError("a filter's stores, branch and exclusions are text, its switches true or false")
        return cls(stores, branch=branch, any_branch=any_branch, archived=archived, exclude=pairs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Filter) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Filter({self.to_json()!r})"
