"""Request bodies. Validation lives here; the error handler turns failures into 4xx JSON."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memory_guard.chat.learning_policy import CacheMode
from memory_guard.core.bounds import Moment, Tag, Text
from memory_guard.memory.edit import Edit
from memory_guard.memory.entry import Status

_NAME = Field(default=None, max_length=200)


class ChatBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    message: Text
    conversation_id: Text | None = Field(default=None, max_length=200)
    type: Literal["user_request", "follow_up"] | None = None
    agent: Text | None = _NAME
    project: Text | None = _NAME
    phase: Text | None = _NAME
    # Its size and depth are bounded by MAX_PROFILE_CHARS in the route (a setting, not a constant).
    entreprise: dict[str, Any] | None = None
    cache: CacheMode = CacheMode.USE


class FeedbackBody(BaseModel):
    validated: bool
    corrected_answer: Text | None = Field(default=None, min_length=1, max_length=100_000)


class EntryCreateBody(BaseModel):
    question: Text = Field(min_length=1, max_length=16_000)
    answer: Text = Field(min_length=1, max_length=100_000)
    agent: Text | None = _NAME
    project: Text | None = _NAME
    phase: Text | None = _NAME
    tags: list[Tag] = Field(default_factory=list, max_length=50)


class EntryPatchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: Text | None = Field(default=None, min_length=1, max_length=16_000)
    answer: Text | None = Field(default=None, min_length=1, max_length=100_000)
    status: Status | None = None
    tags: list[Tag] | None = Field(default=None, max_length=50)
    expires_at: Moment | None = None  # null removes an explicit expiry

    def to_edit(self) -> Edit:
        return Edit(
            question=self.question,
            answer=self.answer,
            status=self.status,
            tags=self.tags,
            expires_at=self.expires_at,
            clear_expiry="expires_at" in self.model_fields_set and self.expires_at is None,
        )


class VariantBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: Text = Field(min_length=1, max_length=16_000, description="another wording of the question")

    @field_validator("question")
    @classmethod
    def _not_blank(cls, question: str) -> str:
        if not question.strip():
            raise ValueError("must not be blank")
        return question


class LookupBody(BaseModel):
    question: Text = Field(min_length=1, max_length=16_000)
    agent: Text | None = _NAME
    project: Text | None = _NAME
    phase: Text | None = _NAME


class ReviewBody(BaseModel):
    correct: bool


class AcceptProposalBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    force: bool = Field(
        default=False, description="apply it even though the entry changed since the proposal was made"
    )


class RejectProposalBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Text | None = Field(default=None, max_length=2000)
