"""An LRU of recent embeddings in front of the embedder.

A cosine lookup spends most of its time embedding the question, and the same questions come
back (a client retrying, many users asking the FAQ, the verifier embedding a candidate it met
before). The key is the model id and the text exactly as it is embedded (the guard passes the
question without its politeness, see `core.normalize.embedding_text`): same key, same vector.
Bulk calls (an import, a re-embedding) go straight to the embedder and leave the cache alone,
so that a file of new questions does not evict the ones being asked.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from memory_guard.embeddings.base import Embedder, Vectors, text_list
from memory_guard.ops.metrics import Metrics

# Calls with more texts than this are bulk work, not questions being asked.
BULK = 8
# Not a setting: 4,096 vectors of 384 floats are 6 MB, and recent questions repeat well within it.
CACHE_SIZE = 4096


class CachingEmbedder:
    def __init__(self, inner: Embedder, size: int, metrics: Metrics) -> None:
        self.inner = inner
        self._size = size
        self._metrics = metrics
        self._rows: OrderedDict[tuple[str, str], Vectors] = OrderedDict()

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def __len__(self) -> int:
        return len(self._rows)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        batch = text_list(texts)
        if not batch or len(batch) > BULK or self._size == 0:
            return await self.inner.embed(batch)
        model = self.inner.model_id
        found: dict[str, Vectors] = {}
        for text in batch:
            row = self._rows.get((model, text))
            if row is not None:
                self._rows.move_to_end((model, text))
                found[text] = row
        missing = list(dict.fromkeys(text for text in batch if text not in found))
        self._metrics.embedding_cache.labels(result="hit").inc(len(batch) - len(missing))
        if missing:
            self._metrics.embedding_cache.labels(result="miss").inc(len(missing))
            for text, row in zip(missing, await self.inner.embed(missing), strict=True):
                found[text] = self._keep((model, text), row)
        return np.stack([found[text] for text in batch])

    def _keep(self, key: tuple[str, str], row: Vectors) -> Vectors:
        # A copy: a row of the embedder's batch would keep the whole batch alive, and a caller
        # writing into what it got must not change what the next caller gets.
        kept = np.array(row, dtype=np.float32, copy=True)
        kept.flags.writeable = False
        self._rows[key] = kept
        self._rows.move_to_end(key)
        while len(self._rows) > self._size:
            self._rows.popitem(last=False)
        return kept

    async def aclose(self) -> None:
        await self.inner.aclose()
