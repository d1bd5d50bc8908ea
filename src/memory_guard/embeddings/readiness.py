"""Readiness of the embedder, probed for real but not on every health check."""

from __future__ import annotations

import time

from memory_guard.embeddings.base import Embedder

# Probes come every few seconds; a real embedding each time would cost CPU (or money, upstream).
PROBE_TTL_S = 30.0


class Readiness:
    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._ok_until = 0.0

    async def embedder_ok(self) -> bool:
        if time.monotonic() < self._ok_until:
            return True
        vectors = await self._embedder.embed(["ready"])
        ok = vectors.shape == (1, self._embedder.dimension)
        self._ok_until = time.monotonic() + PROBE_TTL_S if ok else 0.0
        return ok
