"""What an MCP tool is: its name, description, JSON schema, the ops/ call
it makes and the checks its arguments get (support/validate.py's, the CLI's own),
plus what one server remembers between calls (Session), and the arguments
declared fields give a tool (memory/fields.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..memory.fields import FILTERED, GIVEN, MAX_ITEMS
from ..ops.context import Context
from ..support import validate
from .results import Reply


class Session:
    """What one server remembers between calls: the extraction payloads it
    handed out (session id -> last entry), so the memory_remember that saves
    them, or an extraction_done without a session id, can drop them."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.fetched: dict[str, int] = {}


@dataclass
class Tool:
    name: str
    description: str
    properties: dict[str, dict]
    run: Callable[[Context, dict, "Session"], Reply]
    required: tuple[str, ...] = ()
    read_only: bool = True
    # Recall must not wait for a model that is still loading (it answers by keywords instead).
    wait_for_model: bool = True
    checks: dict[str, Callable[[Any], Any]] = field(default_factory=dict)

    def schema(self) -> dict:
        return {"type": "object", "properties": self.properties, "required": list(self.required),
                "additionalProperties": False}


def string(description: str, **extra: Any) -> dict:
    return {"type": "string", "description": description, **extra}


STORE = string("Store to use. Defaults to this project's store (detected from the git remote).")
LABEL = string("The label (or slug) of the memory.", minLength=1, maxLength=validate.MAX_LABEL_CHARS)
NAME_CHECKS: dict[str, Callable[[Any], Any]] = {"store": validate.store, "branch": validate.branch,
                                                "label": validate.label}


# A tool's arguments that stand for declared fields (memory/fields.py): `where`,
# each filterable one (memory_recall, memory_list), `given`, each a save sets
# (memory_remember); named by the field's JSON key, as the results name it.
def _declared(role: str) -> tuple:
    return FILTERED if role == "where" else GIVEN


def field_properties(role: str) -> dict[str, dict]:
    """The JSON schema of each argument `role` stands for: a flag's a boolean, a list's an array of text."""
    found: dict[str, dict] = {}
    for f in _declared(role):
        text = (f.filter if role == "where" else f.given) or ""
        if f.kind == "flag":
            found[f.json or f.name] = {"type": "boolean", "description": text}
        else:
            found[f.json or f.name] = {"type": "array", "maxItems": MAX_ITEMS, "description": text,
                                       "items": string(f"One {f.item or f.name}.", minLength=1)}
    return found


def field_arguments(role: str, args: dict[str, Any]) -> dict[str, Any]:
    """The values given for `role`'s arguments, by field name (what ops/ takes)."""
    return {f.name: args[f.json or f.name] for f in _declared(role) if (f.json or f.name) in args}
