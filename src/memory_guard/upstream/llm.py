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


# The finish reason of a turn we cut because its text passed the answer cap: like `length`, the
# answer is truncated.
ANSWER_CAP = "answer_cap"


@dataclass(frozen=True, slots=True)
class TurnEnd:
    finish_reason: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None  # what the upstream says the turn cost, when it says (OpenRouter)


StreamItem = TextDelta | ToolCallRequest | TurnEnd


class ChatModel(Protocol):
    """One turn against the upstream. Ends with exactly one TurnEnd, or raises UpstreamError.

    A turn ends by its own deadline, or by `deadline` (event-loop time) when that comes sooner,
    with UpstreamTimeout.
    """

    @property
    def model(self) -> str: ...

    def stream(
        self, messages: list[ChatMessage], tools: list[ToolSchema], *, deadline: float | None = None
    ) -> AsyncIterator[StreamItem]: ...

    async def aclose(self) -> None: ...
