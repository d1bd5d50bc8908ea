"""The answers of the audit routes: recorded changes, by entry or for the whole tenant."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memory_guard.api.responses.base import ACTOR_CODE, ACTOR_PARAMS, MOMENT, ResponseModel
from memory_guard.memory.audit import SNAPSHOT_FIELDS, Action

_SNAPSHOT = f"the entry's fields ({', '.join(SNAPSHOT_FIELDS)})"


class AuditEventOut(ResponseModel):
    id: int
    entry_id: int
    at: str = Field(description=MOMENT)
    actor: str = Field(description="who made the change: a key's digest, the service, or a name")
    actor_code: str | None = ACTOR_CODE
    actor_params: dict[str, str] = ACTOR_PARAMS
    action: Action
    before: dict[str, Any] | None = Field(description=f"{_SNAPSHOT} before; null for a creation")
    after: dict[str, Any] | None = Field(description=f"{_SNAPSHOT} after; null for a deletion")
    proposal_id: int | None = Field(description="the client proposal that staff accepted, if it is one")


class AuditPage(ResponseModel):
    items: list[AuditEventOut]
    next_cursor: str | None


class EntryHistory(ResponseModel):
    items: list[AuditEventOut] = Field(description="every change of the entry, newest first")
