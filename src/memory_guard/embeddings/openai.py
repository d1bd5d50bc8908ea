"""Embeddings from an OpenAI-compatible `/embeddings` endpoint (OpenAI, vLLM, Ollama, proxies).

Upstream failures become `UpstreamError` / `UpstreamTimeout` whose messages carry no
part of the upstream's reply: some providers echo a masked API key in theirs (it is logged,
redacted). Each request ends by its deadline, retries included: an endpoint that trickles its
answer never lets the per-read timeout expire.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import openai
from openai.types import CreateEmbeddingResponse
from pydantic import SecretStr

from memory_guard.core.errors import NotReady, UpstreamError
from memory_guard.embeddings.base import Vectors, normalize_rows
from memory_guard.upstream.calls import Upstream
from memory_guard.upstream.redaction import Redactor

DEFAULT_MODEL = "text-embedding-3-small"
# Widths published by OpenAI, so that `dimension` is known before the first call.
KNOWN_DIMENSIONS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# OpenAI takes at most 2048 inputs in one request.
MAX_INPUTS_PER_REQUEST = 2048
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_DEADLINE_S = 30.0


class OpenAIEmbedder:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: SecretStr | str,
        model: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        deadline_s: float = DEFAULT_DEADLINE_S,
        secrets: Sequence[str] = (),
    ) -> None:
        key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        if not key:
            raise ValueError(
                "EMBEDDING_PROVIDER=openai needs EMBEDDING_API_KEY "
                "(any non-empty value for an endpoint that takes no key)"
            )
        # A blank EMBEDDING_MODEL= in a `.env` means "default", as for the local provider.
        self._model = model.strip() if model is not None and model.strip() else DEFAULT_MODEL
        self._dimension: int | None = KNOWN_DIMENSIONS.get(self._model)
        self._deadline_s = deadline_s
        self._upstream = Upstream("embeddings endpoint", Redactor([key, *secrets]), max_retries)
        # Retried by self._upstream, within the deadline the SDK does not know.
        self._client = openai.AsyncOpenAI(base_url=base_url, api_key=key, timeout=timeout_s, max_retries=0)

    @property
    def model_id(self) -> str:
        return f"openai/{self._model}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            raise NotReady(
                f"the width of embedding model {self._model!r} is known only after the "
                "embeddings endpoint first answers"
            )
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> Vectors:
        # A lone str is a Sequence[str] too: it would be embedded one character at a time.
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        batch = list(texts)
        if not batch:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        parts = [
            await self._request(batch[start : start + MAX_INPUTS_PER_REQUEST])
            for start in range(0, len(batch), MAX_INPUTS_PER_REQUEST)
        ]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    async def _request(self, texts: list[str]) -> Vectors:
        async def attempt() -> CreateEmbeddingResponse:
            # "float" spelled out: some client versions ask for base64 by default, which
            # not every compatible server implements.
            return await self._client.embeddings.create(
                model=self._model, input=texts, encoding_format="float"
            )

        deadline = asyncio.get_running_loop().time() + self._deadline_s
        response = await self._upstream.call(attempt, deadline)
        try:
            items = sorted(response.data, key=lambda item: item.index)
            matrix = np.array([item.embedding for item in items], dtype=np.float32)
        except (AttributeError, TypeError, ValueError):
            raise self._upstream.malformed(repr(response)) from None
        return self._checked(matrix, len(texts))

    def _checked(self, matrix: Vectors, expected_rows: int) -> Vectors:
        if matrix.ndim != 2 or matrix.shape[0] != expected_rows or matrix.shape[1] == 0:
            raise UpstreamError(
                f"the embeddings endpoint returned vectors of shape {matrix.shape} "
                f"for {expected_rows} texts (model {self._model})"
            )
        if not np.isfinite(matrix).all():
            raise UpstreamError(f"the embeddings endpoint returned non-finite values (model {self._model})")
        width = int(matrix.shape[1])
        if self._dimension is None:
            self._dimension = width
        elif width != self._dimension:
            # Vectors of another width cannot be compared with those already stored.
            raise UpstreamError(
                f"the embeddings endpoint returned vectors of width {width}, expected "
                f"{self._dimension} (model {self._model})"
            )
        return normalize_rows(matrix)

    async def aclose(self) -> None:
        await self._client.close()
