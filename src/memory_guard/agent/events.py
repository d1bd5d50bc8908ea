"""The events a chat run emits (docs/API.md, "Chat events"): one model per event, each with its
`type`. Transport-free: `api/sse.py` frames them as Server-Sent Events, and the OpenAPI document
lists their schemas."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memory_guard.core.decision import Decision
from memory_guard.core.shorten import shorten
from memory_guard.memory.entry import Status

PREVIEW_CHARS = 200
REQUEST_ID = "the request's id, as its X-Request-ID response header gives it (null outside HTTP)"


class StreamEvent(BaseModel):
    """What every streamed event shares: its `type`, which is also the SSE event name."""

    # Defaults required in the schema: every event is sent with its `type`.
    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_serialization_defaults_required=True)

    type: str
    # `done` and `error` end a stream; exactly one of them does.
    terminal: ClassVar[bool] = False


class TextEvent(StreamEvent):
    """A piece of the answer, in order: the answer is their concatenation."""

    type: Literal["text"] = "text"
    content: str


class StatusEvent(StreamEvent):
    """A note on the run for the user to read (tools running, memory unavailable, answer cut)."""

    type: Literal["status"] = "status"
    content: str


class SkillStartEvent(StreamEvent):
    type: Literal["skill_start"] = "skill_start"
    skill: str
    params: Any = Field(description="the arguments the model gave, or their raw text when not JSON")


class SkillResultEvent(StreamEvent):
    type: Literal["skill_result"] = "skill_result"
    skill: str
    result_preview: str = Field(description=f"the skill's JSON result, cut to {PREVIEW_CHARS} characters")

    @field_validator("result_preview")
    @classmethod
    def _preview(cls, text: str) -> str:
        # A preview for the user; the model reads the whole result.
        return shorten(text, PREVIEW_CHARS)


class MemoryMatch(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    entry_id: int
    score: float


class MemoryContextEvent(StreamEvent):
    """The entries given to the LLM as grounding (decision `assisted`), before its answer."""

    type: Literal["memory_context"] = "memory_context"
    entries: list[MemoryMatch]


class CachedResponseEvent(StreamEvent):
    """The answer served from memory (decision `direct`): no LLM call."""

    type: Literal["cached_response"] = "cached_response"
    answer: str
    score: float
    entry_id: int
    matched_question: str
    status: Status


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: int
    completion_tokens: int


class DoneEvent(StreamEvent):
    """The run's last event when it succeeded."""

    terminal: ClassVar[bool] = True
    type: Literal["done"] = "done"
    conversation_id: str
    message_id: int = Field(description="the answer's id, for feedback")
    decision: Decision
    learned_entry_id: int | None = Field(description="the entry this answer was learned into, if any")
    reused_entry_id: int | None = Field(
        default=None,
        description="the grounding entry whose stored answer the LLM chose to serve as it is "
        "(use_memory_answer), if it did",
    )
    learned_variant_id: int | None = Field(
        default=None, description="the learned variant the question's wording became, if it did"
    )
    usage: Usage
    request_id: str | None = Field(default=None, description=REQUEST_ID)


class ErrorEvent(StreamEvent):
    """The run's last event when it failed after the stream started."""

    terminal: ClassVar[bool] = True
    type: Literal["error"] = "error"
    code: str
    message: str
    request_id: str | None = Field(default=None, description=REQUEST_ID)


Event = (
    TextEvent
    | StatusEvent
    | SkillStartEvent
    | SkillResultEvent
    | MemoryContextEvent
    | CachedResponseEvent
    | DoneEvent
    | ErrorEvent
)
# In the order a stream may show them, for the OpenAPI document.
CHAT_EVENTS: tuple[type[StreamEvent], ...] = (
    MemoryContextEvent,
    CachedResponseEvent,
    StatusEvent,
    SkillStartEvent,
    SkillResultEvent,
    TextEvent,
    DoneEvent,
    ErrorEvent,
)
