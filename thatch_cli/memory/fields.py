"""One description of a memory: every field once, with what each layer
derives from it.

A field is a column of `entries` and an attribute of `Memory`. From this
table come: the columns storage selects and writes (rows are read by
column name, so a file lacking a newer column still reads), the columns an
older file gains when opened, the `entries` table a new file gets (the
original thatch's columns, in its order), what a history version keeps
and what counts as a change, the JSON shapes (brief and full) and the key
lists the help and man page print, the checks an imported JSONL line
passes, the values shell completion offers, and for a filterable field or
one a save sets, its options and MCP arguments. Adding a field is one
`Field(...)` below plus its behaviour.

Standard library only, no dataclasses or typing: every hot path imports it.
"""

from __future__ import annotations


class Field:
    """One field of a memory.

    name       attribute of Memory, and the column of `entries` it is stored in
    sql        the column's declaration (type and constraints)
    kind       how a value is stored and checked: text (required text), line
               (optional one-line text), name (optional; '' reads as None),
               int, count (an int that reads NULL as 0), flag (0/1 stored,
               bool read), time (ISO timestamp text), blob (a float32 vector),
               list (a sorted tuple of unique one-line items, stored as one
               text ",a,b," that SQL filters with instr(); NULL when empty)
    default    the value of a new Memory
    json       the key in the JSON shapes (None: not shown)
    brief      also in the brief shape (list, hygiene, verdicts), not only the full one
    history    kept in each earlier version (storage/history.py)
    versioned  changing it makes a new version, and `thatch history` names the change
    overwrite  what `remember --overwrite` (and a restored version) does with
               the stored value: "keep" it, keep it unless the new value is
               None ("given"), or replace it (None)
    exported   written by `thatch export`: True, or "vectors" (only with --with-vectors)
    synced     travels with the memory when a team shares a store (per-person
               telemetry and model-specific vectors do not)
    original   a column the original thatch has (a new file creates these
               exactly as it does; the others are thatch_cli's additions)
    first      a flag whose memories `thatch list` puts before the rest
    complete   the `thatch _complete` kind that offers its values (None: not completed)
    check      the support/validate.py check an imported value passes (None: only its kind's)
    table      where it is stored: "entries" (a column), or "marks" (thatch sync's
               per-memory marks, kept beside entries in storage/sync.py, so they
               outlive a forget and writes by the original thatch reset them)
    filter     searches and listings can keep only the memories with it (a flag
               set; a list holding every item asked for): the help of that
               filter (`list`/`recall` option, MCP recall and list argument);
               memory/filter.py carries it, storage/filters.py and the daemon's
               mask (ranking/dense.py) apply it
    item       a list's one value, for its options (`--tag`) and messages
    given      a list that `remember` (and MCP memory_remember) sets: the help
               of that option; saved again without it, a memory keeps its items
    """

    __slots__ = ("name", "sql", "kind", "default", "json", "brief", "history", "versioned", "overwrite",
                 "exported", "synced", "original", "first", "complete", "check", "table", "filter", "item", "given")

    def __init__(self, name: str, sql: str, kind: str, default: object = None, *, json: str | None = "",
                 brief: bool = False, history: bool = True, versioned: bool = False, overwrite: str | None = None,
                 exported: bool | str = True, synced: bool = True, original: bool = True, first: bool = False,
                 complete: str | None = None, check: str | None = None, table: str = "entries",
                 filter: str | None = None, item: str | None = None, given: str | None = None) -> None:
        self.name, self.sql, self.kind, self.default = name, sql, kind, default
        self.json = name if json == "" else json
        self.brief, self.history, self.versioned, self.overwrite = brief, history, versioned, overwrite
        self.exported, self.synced, self.original, self.first = exported, synced, original, first
        self.complete, self.check, self.table = complete, check, table
        self.filter, self.item, self.given = filter, item, given

    @property
    def column(self) -> str:
        return self.name

    @property
    def option(self) -> str:
        """The command-line option that names one value of it: --pinned, --tag."""
        return f"--{self.item or self.name}".replace("_", "-")

    def read(self, value: object) -> object:
        """The Python value of a stored one."""
        if self.kind == "flag":
            return bool(value)
        if self.kind == "list":
            return items(value)
        if self.kind == "count":
            return value or 0
        if self.kind == "name":
            return value or None
        return value

    def store(self, value: object) -> object:
        """The stored value of a Python one."""
        if self.kind == "list":
            return joined(value) if isinstance(value, (tuple, list)) else value
        return int(bool(value)) if self.kind == "flag" else value

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.sql!r}, {self.kind!r})"


# A list field's stored form: its items between separators, ",a,b,", so
# "holds item x" is instr(column, ',x,') in SQL, with nothing to escape.
SEPARATOR = ","
MAX_ITEMS = 32  # items in one list field of one memory


def items(stored: object) -> tuple[str, ...]:
    """A list field's items from its stored text (anything else: none)."""
    if not isinstance(stored, str):
        return ()
    return tuple(sorted({item for item in stored.split(SEPARATOR) if item}))


def joined(values: tuple[str, ...] | list[str]) -> str | None:
    """A list field's stored text (None when it has no items)."""
    unique = sorted(set(values))
    return SEPARATOR + SEPARATOR.join(unique) + SEPARATOR if unique else None


# In the original thatch's column order, then thatch_cli's additions.
FIELDS: tuple[Field, ...] = (
    # The slug travels as its record's file name; each clone detects its own store.
    Field("slug", "TEXT NOT NULL", "text", "", brief=True, versioned=True, synced=False),
    Field("store", "TEXT NOT NULL REFERENCES stores(name)", "text", "", brief=True, versioned=True,
          synced=False, complete="stores", check="store"),
    Field("label", "TEXT NOT NULL", "text", "", brief=True, versioned=True, complete="labels", check="label"),
    Field("content", "TEXT NOT NULL", "text", "", versioned=True),  # "# {label}\n\n{body}"; JSON shows the body
    Field("embedding", "BLOB", "blob", json=None, exported="vectors", synced=False),
    Field("model", "TEXT", "line", synced=False),
    Field("branch", "TEXT", "name", brief=True, versioned=True, overwrite="given", complete="branches",
          check="branch"),
    Field("confidence", "INTEGER", "int", brief=True, versioned=True, overwrite="given", check="confidence"),
    Field("archived", "INTEGER NOT NULL DEFAULT 0", "flag", False, brief=True, versioned=True),
    Field("created_at", "TEXT NOT NULL", "time", "", overwrite="keep"),
    Field("updated_at", "TEXT NOT NULL", "time", "", brief=True),
    Field("recall_count", "INTEGER NOT NULL DEFAULT 0", "count", 0, brief=True, overwrite="keep", synced=False),
    Field("last_recalled_at", "TEXT", "time", overwrite="keep", synced=False),
    # thatch_cli's: listed first, always in the agents' session-start reminder.
    # A pin is one person's choice of what their agents always see, so it is not shared.
    Field("pinned", "INTEGER NOT NULL DEFAULT 0", "flag", False, brief=True, versioned=True, overwrite="given",
          synced=False, original=False, first=True, filter="Only pinned memories."),
    # thatch_cli's: what a memory is about, in words its writer chose (support/validate.tag
    # normalises them); set by remember and tag/untag, filtered by list and recall, shared.
    Field("tags", "TEXT", "list", (), brief=True, versioned=True, overwrite="given", original=False, check="tag",
          item="tag", complete="tags", filter="Only memories with every tag given.", given="Tag it."),
    # thatch sync's marks: who the file of an incoming version names as its
    # author (a claim; None: none named), never shared, not yet reviewed here.
    Field("author", "TEXT", "line", brief=True, history=False, exported=False, synced=False, original=False,
          table="marks"),
    Field("private", "INTEGER NOT NULL DEFAULT 0", "flag", False, brief=True, history=False, exported=False,
          synced=False, original=False, table="marks"),
    Field("unreviewed", "INTEGER NOT NULL DEFAULT 0", "flag", False, brief=True, history=False, exported=False,
          synced=False, original=False, table="marks"),
    # Decided by this machine, never by the file: the current text arrived
    # through thatch sync (a teammate's, whatever its `author` claims).
    Field("incoming", "INTEGER NOT NULL DEFAULT 0", "flag", False, brief=True, history=False, exported=False,
          synced=False, original=False, table="marks"),
)

BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
ENTRIES = tuple(f for f in FIELDS if f.table == "entries")
MARKS = tuple(f for f in FIELDS if f.table == "marks")
ORIGINAL = tuple(f for f in FIELDS if f.original)
FIRST = tuple(f for f in FIELDS if f.first)
HISTORY = tuple(f for f in FIELDS if f.history)
VERSIONED = tuple(f for f in FIELDS if f.versioned)
SYNCED = tuple(f for f in FIELDS if f.synced)
JSON = tuple(f for f in FIELDS if f.json)
BRIEF = tuple(f for f in JSON if f.brief)
FLAGS = tuple(f for f in FIELDS if f.kind == "flag")
LISTS = tuple(f for f in FIELDS if f.kind == "list")
FILTERED = tuple(f for f in FIELDS if f.filter)
GIVEN = tuple(f for f in FIELDS if f.given)
COMPLETED = {f.complete: f for f in FIELDS if f.complete}
# Keys the full JSON shape adds to the fields' own (records.Memory.public).
DERIVED_JSON = ("has_vector",)


def brief_keys() -> str:
    """The brief shape's keys, for help texts and the man page."""
    return ", ".join(f.json or "" for f in BRIEF)


def full_keys() -> str:
    """What the full shape adds to the brief one."""
    return ", ".join([f.json or "" for f in JSON if not f.brief] + list(DERIVED_JSON))
