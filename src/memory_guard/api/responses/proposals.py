"""The answers of the staff routes over client proposals."""

from __future__ import annotations

from pydantic import Field

from memory_guard.api.responses.base import ACTOR_CODE, ACTOR_PARAMS, MOMENT, ResponseModel
from memory_guard.memory.entry import Status
from memory_guard.memory.proposal import ProposalKind, ProposalStatus


class EntryNow(ResponseModel):
    question: str
    answer: str
    status: Status


class ProposalOut(ResponseModel):
    id: int
    entry_id: int
    conversation_id: str
    message_id: int
    kind: ProposalKind
    proposed_answer: str | None = Field(description="the client's correction (kind `correct`)")
    base_answer: str = Field(description="the answer the client saw")
    base_status: Status = Field(description="the entry's status when the client saw it")
    proposed_by: str
    proposed_by_code: str | None = ACTOR_CODE
    proposed_by_params: dict[str, str] = ACTOR_PARAMS
    created_at: str = Field(description=MOMENT)
    status: ProposalStatus
    decided_by: str | None
    decided_by_code: str | None = ACTOR_CODE
    decided_by_params: dict[str, str] = ACTOR_PARAMS
    decided_at: str | None = Field(description=MOMENT)
    reason: str | None = Field(description="why staff rejected it")
    audit_event_id: int | None = Field(description="the change that accepting it recorded")
    entry: EntryNow | None = Field(description="the entry as it is now; null once deleted")
    entry_changed: bool = Field(description="the entry moved since the client saw it")


class ProposalPage(ResponseModel):
    items: list[ProposalOut]
    next_cursor: str | None
