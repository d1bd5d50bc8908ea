"""Request bodies. Validation lives here; the error handler turns failures into 4xx JSON."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memory_guard.memory.entry import Status
from memory_guard.memory.policy import CacheMode

_NAME = Field(default=None, max_length=200)


class ChatBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    message: str
    conversation_id: str | None = Field(default=None, max_length=200)
    type: Literal["user_request", "follow_up"] | None = None
    agent: str | None = _NAME
    project: str | None = _NAME
    phase: str | None = _NAME
    entreprise: dict[str, Any] | None = None
    cache: CacheMode = CacheMode.USE


class FeedbackBody(BaseModel):
    validated: bool
    corrected_answer: str | None = Field(default=None, min_length=1, max_length=100_000)


class EntryCreateBody(BaseModel):
    question: str = Field(min_length=1, max_length=16_000)
    answer: str = Field(min_length=1, max_length=100_000)
    agent: str | None = _NAME
    project: str | None = _NAME
    phase: str | None = _NAME
    tags: list[str] = Field(default_factory=list, max_length=50)


class EntryPatchBody(BaseModel):
    answer: str | None = Field(default=None, min_length=1, max_length=100_000)
    status: Status | None = None
    tags: list[str] | None = Field(default=None, max_length=50)


class LookupBody(BaseModel):
    question: str = Field(min_length=1, max_length=16_000)
    agent: str | None = _NAME
    project: str | None = _NAME
    phase: str | None = _NAME


class ReviewBody(BaseModel):
    correct: bool
