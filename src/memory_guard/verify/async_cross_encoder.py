"""The cross-encoder as the service runs it: loaded once, read off the event loop.

A run takes milliseconds of CPU; like the local embedder's session it goes to the loop's
default thread pool (`asyncio.to_thread`, worker threads reused), so the loop keeps serving
other requests meanwhile (onnxruntime releases the GIL).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from memory_guard.verify.cross_encoder import CrossEncoder, CrossEncoderCutoffs


class CrossEncoderLoadError(RuntimeError):
    """The cross-encoder file could not be loaded: the service does not start without it."""


class AsyncCrossEncoder:
    def __init__(self, encoder: CrossEncoder) -> None:
        self._encoder = encoder
        self._open = True

    @classmethod
    async def open(cls, path: Path | None = None) -> Self:
        """The shipped model (None), checked against its pinned hash, or the file at `path`.

        Whatever is wrong with the file (altered, truncated, not a cross-encoder) stops the start
        with one message naming it and the way out.
        """
        try:
            encoder = await asyncio.to_thread(CrossEncoder.load, path)
        except Exception as exc:  # onnxruntime raises its own kinds for a file it cannot parse
            where = "the shipped cross-encoder" if path is None else f"the cross-encoder file {path}"
            raise CrossEncoderLoadError(
                f"{where} could not be loaded ({type(exc).__name__}: {exc}); "
                "reinstall the package, or set MEMORY_CROSS_ENCODER=off to run without it"
            ) from exc
        return cls(encoder)

    @property
    def model_id(self) -> str:
        return self._encoder.model_id

    @property
    def cutoffs(self) -> CrossEncoderCutoffs:
        return self._encoder.cutoffs

    @property
    def ready(self) -> bool:
        return self._open

    async def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(the stored answer serves the incoming question) per (stored, incoming) pair, one run."""
        if not pairs:
            return []
        return await asyncio.to_thread(self._encoder.probabilities, list(pairs))

    async def aclose(self) -> None:
        self._open = False
        self._encoder.close()
