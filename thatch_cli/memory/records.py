"""Plain records passed between the layers, and their stable JSON shapes
(the CLI's --json output and the MCP server's structured results).

A Memory's attributes are the fields of memory/fields.py, so a new field appears
here, in storage and in both JSON shapes without being named again. Plain
classes rather than dataclasses: building a dataclass compiles its methods
when the module is imported, on every light command.
"""

from __future__ import annotations

from .fields import BRIEF, BY_NAME, ENTRIES, FIELDS, JSON, LISTS, MARKS, NAMES, SYNCED

# What thatch sync carries of a memory (beside its slug, the record's file
# name, and the sync's own `author` and `hlc`), and the marks it keeps beside
# `entries` (storage/sync.py): both read off memory/fields.py.
SYNCED_FIELDS = tuple(f.name for f in SYNCED)
MARK_FIELDS = tuple(f.name for f in MARKS)


class _Record:
    """Equality and repr from `_fields` (what a dataclass would generate)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _shown: tuple[str, ...] = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown or self._fields)
        return f"{self.__class__.__name__}({shown})"


class _Frozen(_Record):
    """A record that is hashable and refuses changes."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{self.__class__.__name__} is read-only")

    def _set(self, **values: object) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)


class Memory:
    """One memory: an attribute per field (memory/fields.py); `content` is exactly
    what was embedded, "# {label}\\n\\n{body}"."""

    __slots__ = NAMES

    # The fields' types, for a type checker: one line per Field of
    # memory/fields.py, its kind's type (tests/memory/test_fields.py keeps them matched).
    slug: str
    store: str
    label: str
    content: str
    embedding: bytes | None
    model: str | None
    branch: str | None
    confidence: int | None
    archived: bool
    created_at: str
    updated_at: str
    recall_count: int
    last_recalled_at: str | None
    pinned: bool
    tags: tuple[str, ...]
    author: str | None
    private: bool
    unreviewed: bool
    incoming: bool

    def __init__(self, **values: object) -> None:
        for f in FIELDS:
            setattr(self, f.name, values.pop(f.name, f.default))
        if values:
            raise TypeError(f"Memory has no field {', '.join(map(repr, values))}")

    @classmethod
    def from_row(cls, names, row) -> "Memory":
        """A Memory from a row of `entries` selected as `names` (columns of
        other programs, and fields the row lacks, are left at their defaults)."""
        memory = cls()
        for name, value in zip(names, row):
            f = BY_NAME.get(name)
            if f is not None:
                setattr(memory, name, f.read(value))
        return memory

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Memory):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in NAMES)

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in FIELDS if f.kind != "blob")
        return f"Memory({shown})"

    @property
    def key(self) -> tuple[str, str]:
        return (self.store, self.slug)

    @property
    def body(self) -> str:
        """The content without the `# label` heading the stored text starts with."""
        from ..support.slugs import body_of

        return body_of(self.label, self.content)

    def columns(self) -> dict:
        """The row of `entries` this memory is (column name -> stored value)."""
        return {f.column: f.store(getattr(self, f.name)) for f in ENTRIES}

    def brief(self) -> dict:
        """The short JSON shape (`list`, hygiene, verdicts)."""
        return {f.json: getattr(self, f.name) for f in BRIEF}

    def public(self) -> dict:
        """The full JSON shape (`show`, `remember`): every field's key (the
        content without its heading), and whether it has a vector."""
        shown = {f.json: getattr(self, f.name) for f in JSON}
        shown["content"] = self.body
        shown["has_vector"] = self.embedding is not None
        return shown

    def flags(self) -> list[str]:
        """The names of the flags set on this memory (archived, ...), for
        output that marks them; provenance (incoming, unreviewed) is said
        by its authorship instead (support/agent_text.authorship)."""
        return [f.name for f in FIELDS if f.kind == "flag" and getattr(self, f.name)
                and f.name not in ("incoming", "unreviewed")]


    def lists(self) -> list[str]:
        """Each list field with items, as output shows it ("tags: a, b")."""
        from ..support.textsafe import visible

        return [f"{f.name}: {', '.join(visible(item, keep='') for item in getattr(self, f.name))}"
                for f in LISTS if getattr(self, f.name)]


class Hit(_Frozen):
    """A memory a ranker found. `score`: semantic, on the calibrated scale
    (calibration/), lexical, the bm25; `match`: "semantic" or "lexical";
    `cosine`: the model's raw cosine of a semantic hit."""

    __slots__ = ("store", "slug", "score", "match", "cosine")
    _fields = __slots__
    store: str
    slug: str
    score: float
    match: str
    cosine: float | None

    def __init__(self, store: str, slug: str, score: float, match: str, cosine: float | None = None) -> None:
        self._set(store=store, slug=slug, score=score, match=match, cosine=cosine)

    @property
    def key(self) -> tuple[str, str]:
        return (self.store, self.slug)



class StoreSummary(_Frozen):
    __slots__ = ("name", "memories", "last_update")
    _fields = __slots__
    name: str
    memories: int
    last_update: str | None

    def __init__(self, name: str, memories: int, last_update: str | None) -> None:
        self._set(name=name, memories=memories, last_update=last_update)

    def public(self) -> dict:
        return {"name": self.name, "memories": self.memories, "last_update": self.last_update}
