"""Re-embedding memories whose vector is missing or from another model.

Vectors come from ctx.engine() (the warm daemon when available), in
batches, one transaction per batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..storage import vectors
from .context import Context
from .scope import existing

BATCH = 256


@dataclass
class ReindexOutcome:
    model: str
    checked: int = 0
    embedded: int = 0
    changed_meanwhile: int = 0

    def to_json(self) -> dict:
        return {"model": self.model, "checked": self.checked, "embedded": self.embedded,
                "changed_meanwhile": self.changed_meanwhile}


def reindex(
    ctx: Context,
    store: str | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    batch: int = BATCH,
) -> ReindexOutcome:
    """Embed every row that the current model cannot rank, `batch` at a time
    (`progress` hears after each). Raises ModelUnavailable (changing
    nothing) when the model does not load."""
    from ..model.embeddings import model_space

    ctx.degrade_under_load = False  # embedding is the whole point: in-process if the daemon cannot keep up
    engine = ctx.engine()
    db = ctx.db()
    stores = [existing(ctx, store)] if store is not None else None
    name, dim = engine.model_info()
    # Rows this model ranks already (the original thatch's included, when
    # both embed one model the same way) are left as their writer made them.
    space = model_space(name)
    rows = vectors.reindex_rows(db, stores)
    todo = [(s, slug, content) for s, slug, content, model, length in rows
            if length != 4 * dim or model_space(model) != space]
    outcome = ReindexOutcome(model=name, checked=len(rows))
    if progress:
        progress(0, len(todo))
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        embedded = engine.embed_passages([content for _, _, content in chunk])
        with db.transaction():
            for (s, slug, content), blob in zip(chunk, embedded.blobs):
                if vectors.set_vector(db, s, slug, content, blob, embedded.model):
                    outcome.embedded += 1
                else:
                    outcome.changed_meanwhile += 1
        if progress:
            progress(start + len(chunk), len(todo))
    return outcome
