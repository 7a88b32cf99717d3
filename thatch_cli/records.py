"""Plain records passed between the layers, and their stable JSON shapes
(the CLI's --json output and the MCP server's structured results).

Hand-written classes, not dataclasses: every light command builds these,
and `dataclasses` costs it inspect, ast and dis at start-up."""

from __future__ import annotations


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
        return self._values() == other._values()  # type: ignore[attr-defined]

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


class Memory(_Record):
    __slots__ = ("store", "slug", "label", "content", "branch", "confidence", "archived", "created_at",
                 "updated_at", "recall_count", "last_recalled_at", "model", "embedding")
    _fields = __slots__
    _shown = _fields[:-1]  # not the vector

    def __init__(self, store: str, slug: str, label: str, content: str, branch: str | None = None,
                 confidence: int | None = None, archived: bool = False, created_at: str = "",
                 updated_at: str = "", recall_count: int = 0, last_recalled_at: str | None = None,
                 model: str | None = None, embedding: bytes | None = None) -> None:
        self.store, self.slug, self.label = store, slug, label
        self.content = content  # exactly what was embedded: "# {label}\n\n{body}"
        self.branch, self.confidence, self.archived = branch, confidence, archived
        self.created_at, self.updated_at = created_at, updated_at
        self.recall_count, self.last_recalled_at = recall_count, last_recalled_at
        self.model, self.embedding = model, embedding

    @property
    def key(self) -> tuple[str, str]:
        return (self.store, self.slug)

    @property
    def body(self) -> str:
        """The content without the `# label` heading the stored text starts with."""
        from .slugs import body_of

        return body_of(self.label, self.content)

    def columns(self) -> dict:
        """The row of `entries` this memory is."""
        return {
            "slug": self.slug, "store": self.store, "label": self.label, "content": self.content,
            "embedding": self.embedding, "model": self.model, "branch": self.branch,
            "confidence": self.confidence, "archived": int(self.archived), "created_at": self.created_at,
            "updated_at": self.updated_at, "recall_count": self.recall_count,
            "last_recalled_at": self.last_recalled_at,
        }

    def brief(self) -> dict:
        """The short JSON shape (`list`, hygiene, verdicts)."""
        return {
            "store": self.store,
            "slug": self.slug,
            "label": self.label,
            "branch": self.branch,
            "confidence": self.confidence,
            "archived": self.archived,
            "updated_at": self.updated_at,
            "recall_count": self.recall_count,
        }

    def public(self) -> dict:
        """The full JSON shape (`show`, `remember`)."""
        return {
            **self.brief(),
            "content": self.body,
            "created_at": self.created_at,
            "last_recalled_at": self.last_recalled_at,
            "model": self.model,
            "has_vector": self.embedding is not None,
        }


class Hit(_Frozen):
    __slots__ = ("store", "slug", "score", "match")
    _fields = __slots__

    def __init__(self, store: str, slug: str, score: float, match: str) -> None:
        self._set(store=store, slug=slug, score=score, match=match)  # match: "semantic" or "lexical"

    @property
    def key(self) -> tuple[str, str]:
        return (self.store, self.slug)


class StoreSummary(_Frozen):
    __slots__ = ("name", "memories", "last_update")
    _fields = __slots__

    def __init__(self, name: str, memories: int, last_update: str | None) -> None:
        self._set(name=name, memories=memories, last_update=last_update)

    def public(self) -> dict:
        return {"name": self.name, "memories": self.memories, "last_update": self.last_update}
