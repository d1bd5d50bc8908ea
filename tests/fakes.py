"""In-repo fakes of our own seams, for unit tests that need no HTTP at all."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from memory_guard.core.errors import UpstreamError
from memory_guard.core.verdict import Verdict, Verification
from memory_guard.embeddings.base import Embedder, Vectors
from memory_guard.upstream.llm import ChatMessage, StreamItem, ToolSchema
from memory_guard.verify.features import Comparison
from memory_guard.verify.verifier import OfflineVerifier


class ScriptedChatModel:
    """A ChatModel that plays back one scripted turn per call and records what it was sent."""

    def __init__(self, turns: Sequence[Sequence[StreamItem]]) -> None:
        self._turns = list(turns)
        self.sent: list[list[ChatMessage]] = []

    @property
    def model(self) -> str:
        return "scripted"

    async def stream(
        self, messages: list[ChatMessage], tools: list[ToolSchema], *, deadline: float | None = None
    ) -> AsyncIterator[StreamItem]:
        self.sent.append([dict(m) for m in messages])
        for item in self._turns.pop(0):
            yield item

    async def aclose(self) -> None:
        return None


class UnreachableEmbedder:
    """An embeddings provider whose endpoint is down."""

    model_id = "unreachable/0"
    dimension = 384

    async def embed(self, texts: Sequence[str]) -> Vectors:
        raise UpstreamError("the embeddings endpoint failed: ConnectError")

    async def aclose(self) -> None:
        return None


class CountingEmbedder:
    """Wraps an embedder and counts the texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts: list[str] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return await self.inner.embed(texts)

    async def aclose(self) -> None:
        await self.inner.aclose()


class UnsureVerifier(OfflineVerifier):
    """The offline verifier unsure of every pair its checks do not reject.

    No classifier ships for the test embedder and the checks alone never say unsure; this
    puts candidates in the state where the LLM judge is asked.
    """

    def __init__(self) -> None:
        super().__init__(None)

    def decide(self, comparison: Comparison, residual: float | None = None) -> Verification:
        checked = super().decide(comparison, residual)
        if checked.verdict is Verdict.REJECT:
            return checked
        return Verification(Verdict.UNSURE, "unsure (test)", 0.35)
