"""Which memories a search or a listing keeps: one value, built once by the
operation, carried as is to the in-process ranking or (as JSON) to the
daemon, turned into SQL by storage/filters.py and into the daemon's matrix
mask by ranking/dense.py. A field declared filterable (memory/fields.py
`filter`) is filtered through `fields` without being named anywhere in
between; another way of filtering is added here and in those two renderings.

Standard library only: the hot paths import the records beside it."""

from __future__ import annotations

from .fields import BY_NAME, FILTERED

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the prompt hook would pay ~2.5 ms to import typing
if TYPE_CHECKING:
    from typing import Any, Iterable, Mapping, Sequence


class Filter:
    """stores         the stores searched
    all_stores     every store instead (a listing; searches always name theirs)
    branch         memories without a branch are kept, plus this branch's
    branch_only    only this branch's (not those without a branch)
    any_branch     every branch's memories are kept (`branch` is then ignored)
    archived       archived memories are kept too (otherwise live ones only)
    only_archived  archived memories only
    exclude        (store, slug) pairs never returned (the memory being replaced)
    fields         filterable field (memory/fields.py) -> what it must hold: a
                   flag True, a list the items it must all hold"""

    __slots__ = ("stores", "all_stores", "branch", "branch_only", "any_branch", "archived", "only_archived",
                 "exclude", "fields")

    def __init__(self, stores: Sequence[str], *, all_stores: bool = False, branch: str | None = None,
                 branch_only: bool = False, any_branch: bool = False, archived: bool = False,
                 only_archived: bool = False, exclude: Iterable[tuple[str, str]] = (),
                 fields: Mapping[str, object] | None = None) -> None:
        self.stores: tuple[str, ...] = tuple(stores)
        self.all_stores = all_stores
        self.branch = None if any_branch else branch
        self.branch_only = branch_only and self.branch is not None
        self.any_branch, self.archived, self.only_archived = any_branch, archived, only_archived
        self.exclude: frozenset[tuple[str, str]] = frozenset(exclude)
        self.fields: dict[str, object] = wanted(fields or {})

    def to_json(self) -> dict[str, Any]:
        """The shape the daemon's search request carries (daemon/protocol.py)."""
        return {"stores": list(self.stores), "all_stores": self.all_stores, "branch": self.branch,
                "branch_only": self.branch_only, "any_branch": self.any_branch, "archived": self.archived,
                "only_archived": self.only_archived,
                "exclude": sorted([store, slug] for store, slug in self.exclude),
                "fields": {name: list(value) if isinstance(value, tuple) else value
                           for name, value in sorted(self.fields.items())}}

    @classmethod
    def from_json(cls, data: Any) -> Filter:
        """The filter to_json gave; ValueError for anything else."""
        keys = ("stores", "all_stores", "branch", "branch_only", "any_branch", "archived", "only_archived",
                "exclude", "fields")
        if not isinstance(data, dict) or set(data) != set(keys):
            raise ValueError(f"a filter is {{{', '.join(keys)}}}")
        stores, branch, exclude, fields = data["stores"], data["branch"], data["exclude"], data["fields"]
        switches = [data[k] for k in ("all_stores", "branch_only", "any_branch", "archived", "only_archived")]
        try:
            pairs = [(store, slug) for store, slug in exclude]
        except (TypeError, ValueError):
            raise ValueError("a filter's exclusions are [store, slug] pairs") from None
        texts = [*stores, *(p for pair in pairs for p in pair)] if isinstance(stores, list) else None
        if (texts is None or not all(isinstance(t, str) for t in texts) or not isinstance(branch, (str, type(None)))
                or not all(isinstance(s, bool) for s in switches) or not isinstance(fields, dict)):
            raise ValueError("a filter's stores, branch and exclusions are text, its switches true or false")
        all_stores, branch_only, any_branch, archived, only_archived = switches
        return cls(stores, all_stores=all_stores, branch=branch, branch_only=branch_only, any_branch=any_branch,
                   archived=archived, only_archived=only_archived, exclude=pairs, fields=fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Filter) and self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Filter({self.to_json()!r})"


def wanted(given: Mapping[str, object]) -> dict[str, object]:
    """What each filterable field must hold, checked by its kind: a flag
    asked for (True; False asks nothing), a list's items (sorted, unique;
    none asks nothing). ValueError for a field that is not filterable or a
    value of the wrong kind."""
    found: dict[str, object] = {}
    for name, value in given.items():
        field = BY_NAME.get(name)
        if field is None or field not in FILTERED:
            raise ValueError(f"{name!r} is not a filterable field")
        if field.kind == "flag" and isinstance(value, bool):
            if value:
                found[name] = True
        elif field.kind == "list" and isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            if value:
                found[name] = tuple(sorted(set(value)))
        else:
            raise ValueError(f"filter {name!r}: {'true or false' if field.kind == 'flag' else 'a list of text'}")
    return found
