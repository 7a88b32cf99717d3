"""Plain records passed between the layers."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Memory:
    store: str
    slug: str
    label: str
    content: str
    branch: str | None = None
    confidence: int | None = None
    archived: bool = False
    created_at: str = ""
    updated_at: str = ""
    recall_count: int = 0
    last_recalled_at: str | None = None
    model: str | None = None
    embedding: bytes | None = field(default=None, repr=False)

    @property
    def key(self) -> tuple[str, str]:
        return (self.store, self.slug)

    def public(self) -> dict:
        """The stable JSON shape of a memory (documented in README)."""
        from .slugs import body_of

        return {
            "store": self.store,
            "slug": self.slug,
            "label": self.label,
            "content": body_of(self.label, self.content),
            "branch": self.branch,
            "confidence": self.confidence,
            "archived": self.archived,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "recall_count": self.recall_count,
            "last_recalled_at": self.last_recalled_at,
            "model": self.model,
            "has_vector": self.embedding is not None,
        }


@dataclass(frozen=True)
class Hit:
    store: str
    slug: str
    score: float
    match: str  # "semantic" or "lexical"

    @property
    def key(self) -> tuple[str, str]:
        return (self.store, self.slug)


@dataclass(frozen=True)
class StoreSummary:
    name: str
    memories: int
    last_update: str | None
