"""Plain records passed between the layers, and their stable JSON shapes
(the CLI's --json output and the MCP server's structured results)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Memory:
    store: str
    slug: str
    label: str
    content: str  # exactly what was embedded: "# {label}\n\n{body}"
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


@dataclass(frozen=True)
class Hit:
    store: str
    slug: str
    score: float  # semantic: on the calibrated scale (calibration/); lexical: the bm25
    match: str  # "semantic" or "lexical"
    cosine: float | None = None  # semantic: the model's raw cosine

    @property
    def key(self) -> tuple[str, str]:
        return (self.store, self.slug)


@dataclass(frozen=True)
class StoreSummary:
    name: str
    memories: int
    last_update: str | None

    def public(self) -> dict:
        return {"name": self.name, "memories": self.memories, "last_update": self.last_update}
