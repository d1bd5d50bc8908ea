"""Request bodies. Validation lives here; the error handler turns failures into 4xx JSON."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memory_guard.memory.edit import Edit
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
    model_config = ConfigDict(extra="forbid")

    question: str | None = Field(default=None, min_length=1, max_length=16_000)
    answer: str | None = Field(default=None, min_length=1, max_length=100_000)
    status: Status | None = None
    tags: list[str] | None = Field(default=None, max_length=50)
    expires_at: datetime | None = None  # null removes an explicit expiry

    def to_edit(self) -> Edit:
        return Edit(
            question=self.question,
            answer=self.answer,
            status=self.status,
            tags=self.tags,
            expires_at=self.expires_at,
            clear_expiry="expires_at" in self.model_fields_set and self.expires_at is None,
        )


class LookupBody(BaseModel):
    question: str = Field(min_length=1, max_length=16_000)
    agent: str | None = _NAME
    project: str | None = _NAME
    phase: str | None = _NAME


class ReviewBody(BaseModel):
    correct: bool
