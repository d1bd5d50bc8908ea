"""The embedding cache: a question asked again is not embedded again."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory_guard.core.scope import Scope
from memory_guard.embeddings.cache import CachingEmbedder
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.ops.metrics import Metrics
from memory_guard.services import Services
from memory_guard.settings import Settings
from tests.fakes import CountingEmbedder

SCOPE = Scope("acme", "assistant")


async def test_the_second_identical_question_does_not_call_the_embedder(tmp_path: Path) -> None:
    counting = CountingEmbedder(HashingEmbedder())
    settings = Settings(_env_file=None, memory_db_path=tmp_path / "m.db", embedding_provider="hashing")  # type: ignore[call-arg]
    services = await Services.open(settings, embedder=counting)
    try:
        await services.entries.create_faq(
            SCOPE, "Quel est le délai de la garantie de parfait achèvement ?", "Un an.", (), "staff"
        )
        asked = "Combien de temps dure la garantie de parfait achèvement ?"
        first = await services.guard.lookup(SCOPE, asked)
        embedded = len(counting.texts)
        second = await services.guard.lookup(SCOPE, asked + " svp")  # the same text once embedded
        assert len(counting.texts) == embedded, "the cache answered"
        assert second.best is not None and first.best is not None
        assert second.best.score == first.best.score
        metrics = services.metrics.render().decode()
        assert 'memory_guard_embedding_cache_total{result="hit"}' in metrics
        assert 'memory_guard_embedding_cache_total{result="hit"} 0.0' not in metrics
    finally:
        await services.aclose()


async def test_the_cache_is_bounded_and_left_alone_by_bulk_calls() -> None:
    counting = CountingEmbedder(HashingEmbedder())
    cache = CachingEmbedder(counting, size=2, metrics=Metrics())
    a = await cache.embed(["a"])
    await cache.embed(["b"])
    await cache.embed(["c"])  # evicts "a", the least recently used
    assert len(cache) == 2
    again = await cache.embed(["a"])
    assert counting.texts == ["a", "b", "c", "a"]
    assert np.array_equal(a, again)
    mixed = await cache.embed(["a", "c", "d"])  # two known, one new: one call for the new one
    assert counting.texts[-1:] == ["d"] and mixed.shape == (3, counting.dimension)
    bulk = [f"ligne {n}" for n in range(50)]
    await cache.embed(bulk)  # an import's batch: neither read nor kept
    assert len(cache) == 2
