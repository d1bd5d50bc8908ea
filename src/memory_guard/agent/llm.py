"""The LLM seam: a streamed chat turn, reduced to text pieces, whole tool calls and an end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

ChatMessage = dict[str, Any]
ToolSchema = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A tool call whose streamed fragments have been put back together."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class TurnEnd:
    finish_reason: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


StreamItem = TextDelta | ToolCallRequest | TurnEnd


class ChatModel(Protocol):
    """One turn against the upstream. Ends with exactly one TurnEnd, or raises UpstreamError."""

    @property
    def model(self) -> str: ...

    def stream(self, messages: list[ChatMessage], tools: list[ToolSchema]) -> AsyncIterator[StreamItem]: ...

    async def aclose(self) -> None: ...
