"""What an OpenAI chat completion request says to memory-guard: its body as the `openai` client
sends it, and the scope and cache control it gives in headers or in the body's `metadata`.

The tenant is the key's, never the request's: a `tenant` in either place is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from fastapi import Header, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator

from memory_guard.chat.completions import CompletionRequest
from memory_guard.chat.learning_policy import CacheMode
from memory_guard.core.bounds import Text, valid_text
from memory_guard.core.errors import InvalidRequest

SCOPE_FIELDS = ("agent", "project", "phase")
_MAX_NAME = 200


class MessageIn(BaseModel):
    """One message of the conversation. Its other fields (tool_calls, tool_call_id, name) are kept
    and sent as they are when the request passes through to the upstream."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: Text | list[dict[str, Any]] | None = None

    @field_validator("content")
    @classmethod
    def _text_parts(cls, content: str | list[dict[str, Any]] | None) -> str | list[dict[str, Any]] | None:
        # A text part may be the question, which is stored: valid Unicode, as every text is.
        for part in content if isinstance(content, list) else ():
            if isinstance(part.get("text"), str):
                valid_text(part["text"])
        return content


class StreamOptions(BaseModel):
    include_usage: bool = False


class CompletionBody(BaseModel):
    """OpenAI's chat completion request. Its sampling fields (temperature, max_tokens...) are
    accepted and not used: the answer comes from the configured LLM, or from memory."""

    model_config = ConfigDict(extra="allow")

    model: Text = Field(min_length=1, max_length=_MAX_NAME, description="echoed in the answer")
    messages: list[MessageIn] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    tools: list[dict[str, Any]] | None = Field(
        default=None, description="the client's own tools: the request passes through to the upstream"
    )
    metadata: dict[str, Any] | None = Field(
        default=None,
        description="`agent`, `project`, `phase` (the scope) and `cache` (`no-cache`, `no-store` or "
        "both, comma-separated) for clients that cannot set headers; other keys are ignored",
    )
    n: int | None = Field(default=None, ge=1, le=1, description="one choice only")

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


_Name = Annotated[Text | None, Header(max_length=_MAX_NAME)]


@dataclass(frozen=True, slots=True)
class Directions:
    """What the headers say: the scope and the cache control."""

    agent: str | None
    project: str | None
    phase: str | None
    cache_control: str | None
    tenant_given: bool


async def directions(
    request: Request,
    x_memory_guard_agent: _Name = None,
    x_memory_guard_project: _Name = None,
    x_memory_guard_phase: _Name = None,
    cache_control: Annotated[
        str | None,
        Header(description="`no-cache`: skip the memory lookup; `no-store`: learn nothing from it"),
    ] = None,
) -> Directions:
    return Directions(
        x_memory_guard_agent,
        x_memory_guard_project,
        x_memory_guard_phase,
        cache_control,
        "x-memory-guard-tenant" in request.headers,
    )


def completion_request(body: CompletionBody, given: Directions) -> CompletionRequest:
    metadata = body.metadata or {}
    if given.tenant_given or "tenant" in metadata:
        raise InvalidRequest(
            "the tenant is the API key's: a request may not name one", code="tenant_not_allowed"
        )
    scope = {name: _scope_value(name, getattr(given, name), metadata.get(name)) for name in SCOPE_FIELDS}
    directives = _directives(given.cache_control, strict=False) | _directives(
        _metadata_text("cache", metadata.get("cache")), strict=True
    )
    return CompletionRequest(
        messages=[message.model_dump(exclude_unset=True) for message in body.messages],
        tools=body.tools or [],
        cache=_cache_mode(directives),
        **scope,
    )


def _scope_value(name: str, header: str | None, field: Any) -> str | None:
    value = _metadata_text(name, field)
    if value is not None and len(value) > _MAX_NAME:
        raise InvalidRequest(f"metadata.{name} is longer than {_MAX_NAME} characters", code="invalid_scope")
    if header is not None and value is not None and header != value:
        raise InvalidRequest(
            f"X-Memory-Guard-{name.title()} and metadata.{name} differ: give the {name} once",
            code="conflicting_scope",
        )
    return header if header is not None else value


def _metadata_text(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRequest(f"metadata.{name} must be a string", code="invalid_scope")
    try:
        return valid_text(value)
    except ValueError as exc:
        raise InvalidRequest(f"metadata.{name}: {exc}", code="invalid_scope") from None


_DIRECTIVES = frozenset({"no-cache", "no-store"})


def _directives(value: str | None, *, strict: bool) -> frozenset[str]:
    """The cache directives memory-guard reads. A header may carry others (max-age=0, set by a
    proxy or a library): they are left alone; in `metadata.cache` an unknown one is an error."""
    found = {part.strip().lower() for part in (value or "").split(",") if part.strip()}
    unknown = found - _DIRECTIVES
    if strict and unknown:
        raise InvalidRequest(
            f"metadata.cache: unknown directive {sorted(unknown)[0]!r}; use no-cache, no-store or both",
            code="invalid_cache",
        )
    return frozenset(found & _DIRECTIVES)


def _cache_mode(directives: frozenset[str]) -> CacheMode:
    if directives == _DIRECTIVES:
        return CacheMode.BYPASS
    if "no-cache" in directives:
        return CacheMode.REFRESH  # a fresh answer, learned in place of the `auto` one
    if "no-store" in directives:
        return CacheMode.NO_STORE
    return CacheMode.USE
