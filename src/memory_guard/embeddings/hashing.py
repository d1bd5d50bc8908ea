"""A deterministic numpy-only embedder for fast tests: hashed character n-grams.

It knows nothing of meaning; texts sharing many character n-grams score high. Its
model id names the recipe so its vectors are never compared with a real model's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memory_guard.core.normalize import normalize_question
from memory_guard.embeddings.base import Vectors, normalize_rows


class HashingEmbedder:
    def __init__(self, dimension: int = 384, ngram: int = 3) -> None:
        self._dimension = dimension
        self._ngram = ngram

    @property
    def model_id(self) -> str:
        return f"hashing/char{self._ngram}-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return self.embed_sync(texts)

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        rows = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f" {normalize_question(text)} "
            for start in range(max(1, len(padded) - self._ngram + 1)):
                gram = padded[start : start + self._ngram].encode()
                digest = hashlib.blake2b(gram, digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self._dimension
                sign = 1.0 if digest[4] & 1 else -1.0
                rows[row, bucket] += sign
        return normalize_rows(rows)

    async def aclose(self) -> None:
        return None
