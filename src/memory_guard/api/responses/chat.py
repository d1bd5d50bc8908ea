"""The JSON answers of the chat routes (the chat itself streams events: agent/events.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memory_guard.api.responses.base import MOMENT, ResponseModel
from memory_guard.memory.entry import Status


class MessageOut(ResponseModel):
    id: int
    role: Literal["user", "assistant"]
    type: str = Field(description="user_request or follow_up (user); response or cached_response (assistant)")
    content: str
    created_at: str = Field(description=MOMENT)


class Messages(ResponseModel):
    items: list[MessageOut] = Field(description="the conversation, oldest first")


class VariantFeedbackOut(ResponseModel):
    id: int = Field(description="the question variant the answer was served through")
    outcome: Literal["confirmed", "removed", "unchanged"] = Field(
        description="confirmed: one confirmation more; removed: the wording no longer matches; unchanged"
    )


class FeedbackOut(ResponseModel):
    entry_id: int
    status: Status = Field(description="the entry's status after the feedback")
    outcome: Literal["applied", "proposed", "unchanged"] = Field(
        description="applied: the entry or its variant changed; proposed: staff will decide "
        "(proposal_id); unchanged"
    )
    proposal_id: int | None
    variant: VariantFeedbackOut | None = Field(
        description="when the answer was served through a question variant: what became of it"
    )
