"""The answers of the OpenAI-compatible endpoint, in OpenAI's own shapes (docs/API.md,
"OpenAI-compatible endpoint"): what the official `openai` client parses."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from memory_guard.api.responses.base import ResponseModel


class _Shape(ResponseModel):
    # Every field is sent, null ones included, as OpenAI sends them.
    model_config = ConfigDict(extra="forbid", json_schema_serialization_defaults_required=True)


class FunctionCall(_Shape):
    name: str
    arguments: str = Field(description="the arguments as the model wrote them: JSON text")


class ToolCall(_Shape):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ToolCallDelta(ToolCall):
    index: int


class CompletionUsage(_Shape):
    """All zeros on an answer from memory: no token was spent on it."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AssistantMessage(_Shape):
    role: Literal["assistant"] = "assistant"
    content: str | None
    refusal: None = None
    tool_calls: list[ToolCall] | None = None


class Choice(_Shape):
    index: int = 0
    message: AssistantMessage
    finish_reason: str
    logprobs: None = None


class ChatCompletion(_Shape):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str = Field(description="the model the request named")
    choices: list[Choice]
    usage: CompletionUsage
    system_fingerprint: None = None


class Delta(_Shape):
    role: Literal["assistant"] | None = None
    content: str | None = None
    tool_calls: list[ToolCallDelta] | None = None


class ChunkChoice(_Shape):
    index: int = 0
    delta: Delta
    finish_reason: str | None = None
    logprobs: None = None


class ChatCompletionChunk(_Shape):
    """One `data:` line of a streamed answer; the last one, with `stream_options.include_usage`,
    has no choice and the usage."""

    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: CompletionUsage | None = None
    system_fingerprint: None = None


class Model(_Shape):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "memory-guard"


class ModelList(_Shape):
    object: Literal["list"] = "list"
    data: list[Model]


class OpenAIErrorDetail(_Shape):
    message: str = Field(description="what is wrong, for a person")
    type: str = Field(
        description="invalid_request_error, authentication_error, permission_error, rate_limit_error "
        "or api_error"
    )
    code: str = Field(description="the service's stable code: e.g. invalid_request, upstream_error")
    param: str | None = None


class OpenAIErrorBody(_Shape):
    """The body of every error under /v1, and the `data:` of a stream's error line."""

    error: OpenAIErrorDetail
