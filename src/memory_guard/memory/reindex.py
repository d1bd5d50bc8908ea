"""Re-embed stored questions, and their variants, with the configured model (an explicit command,
never implicit)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_guard.core.normalize import embedding_text
from memory_guard.embeddings.base import Embedder
from memory_guard.memory.store import MemoryStore
from memory_guard.memory.variant import VariantStore

BATCH = 64


async def reindex(
    store: MemoryStore,
    embedder: Embedder,
    everything: bool,
    on_total: Callable[[int], Any] = lambda total: None,
    on_progress: Callable[[int], Any] = lambda done: None,
    variants: VariantStore | None = None,
) -> int:
    """Re-embed entries whose vector, or one of whose `variants`' vectors, is not from `embedder`
    (all of them with `everything`), each with its variants.

    Each batch is written in its own transaction, so an interrupted run keeps what it did
    and the next run picks up the rest.
    """
    ids = await store.ids_to_reembed(embedder.model_id, everything)
    if variants is not None and not everything:
        ids = sorted(set(ids) | set(await variants.entries_to_reembed(embedder.model_id)))
    on_total(len(ids))
    for start in range(0, len(ids), BATCH):
        batch = ids[start : start + BATCH]
        rows = await store.questions(batch)
        wordings = await variants.questions(batch) if variants is not None else []
        vectors = await embedder.embed([embedding_text(question) for _, question in rows + wordings])
        await store.set_vectors(
            [(entry_id, vectors[i]) for i, (entry_id, _) in enumerate(rows)], embedder.model_id
        )
        if variants is not None and wordings:
            await variants.set_vectors(
                [(variant_id, vectors[len(rows) + i]) for i, (variant_id, _) in enumerate(wordings)],
                embedder.model_id,
            )
        on_progress(len(rows))
    return len(ids)
