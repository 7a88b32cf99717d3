"""Values a person or an agent gives for declared fields (memory/fields.py),
checked by the field's kind and its support/validate.py check, the same on
every front door: a filter's (`list --tag`, memory_recall's `tags`), a
saved memory's (`remember --tag`), an imported or synced line's.

Standard library only: light commands import it."""

from __future__ import annotations

from ..support import validate
from ..support.errors import InvalidInput
from .fields import BY_NAME, FILTERED, GIVEN, MAX_ITEMS, SEPARATOR

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: light commands never import typing
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from .fields import Field


def listed(field: Field, given: Iterable[object]) -> tuple[str, ...]:
    """A list field's items, each checked (and normalised) by the field's
    check, sorted and unique; InvalidInput for a bad one or too many."""
    check = getattr(validate, field.check) if field.check else None
    found = set()
    for item in given:
        if not isinstance(item, str):
            raise InvalidInput(f"each {field.item or field.name} is text")
        item = check(item) if check else item
        if not item or SEPARATOR in item:
            raise InvalidInput(f"{field.item or field.name} {item!r} is empty or holds {SEPARATOR!r}")
        found.add(item)
    if len(found) > MAX_ITEMS:
        raise InvalidInput(f"{len(found)} {field.name}; the limit is {MAX_ITEMS} per memory")
    return tuple(sorted(found))


def filters(given: Mapping[str, object] | None) -> dict[str, object]:
    """What a search or listing asks of each filterable field (memory/filter.py):
    a flag asked for, a list's items (each checked as when it is saved)."""
    found: dict[str, object] = {}
    for name, value in (given or {}).items():
        field = BY_NAME[name]
        if field not in FILTERED:
            raise InvalidInput(f"memories cannot be filtered by {name}")
        if field.kind == "list":
            items = listed(field, value if isinstance(value, (list, tuple)) else [value])
            if items:
                found[name] = items
        elif value:
            found[name] = True
    return found


def chosen(given: Mapping[str, object] | None) -> dict[str, tuple[str, ...]]:
    """The values given for fields a save sets (memory/fields.py `given`):
    only those given (an overwrite keeps the others), each checked."""
    found = {}
    for name, value in (given or {}).items():
        field = BY_NAME[name]
        if field not in GIVEN:
            raise InvalidInput(f"{name} is not set when saving a memory")
        if value is not None:
            found[name] = listed(field, value if isinstance(value, (list, tuple)) else [value])
    return found
