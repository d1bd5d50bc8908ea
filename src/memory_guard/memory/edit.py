"""A staff edit of an entry: what may change, and which audit action it counts as."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory_guard.core.errors import InvalidRequest
from memory_guard.memory.audit import Action
from memory_guard.memory.entry import Entry, Status, clean_tags

_STATUS_ACTIONS = {Status.VALIDATED: Action.VALIDATE, Status.OBSOLETE: Action.OBSOLETE}


@dataclass(frozen=True, slots=True)
class Edit:
    """Fields left at None stay as they are; `clear_expiry` removes an explicit expiry."""

    question: str | None = None
    answer: str | None = None
    status: Status | None = None
    tags: Sequence[str] | None = None
    expires_at: datetime | None = None
    clear_expiry: bool = False
    action: Action | None = None  # derived from the fields when not given

    def fields(self, current: Entry) -> dict[str, Any]:
        """The columns to write; refuses an empty text or an edit that changes nothing."""
        fields: dict[str, Any] = {}
        for name in ("question", "answer"):
            value = getattr(self, name)
            if value is not None:
                if not value.strip():
                    raise InvalidRequest(f"the {name} must not be empty", code=f"empty_{name}")
                fields[name] = value
        if self.status is not None:
            fields["status"] = self.status
        if self.tags is not None:
            fields["tags"] = clean_tags(self.tags)
        if self.clear_expiry:
            fields["expires_at"] = None
        elif self.expires_at is not None:
            moment = self.expires_at
            fields["expires_at"] = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        if not fields:
            raise InvalidRequest(
                "nothing to change: give question, answer, status, tags or expires_at", code="empty_edit"
            )
        return fields

    def action_for(self, fields: dict[str, Any]) -> Action:
        if self.action is not None:
            return self.action
        if set(fields) == {"status"}:
            return _STATUS_ACTIONS.get(fields["status"], Action.EDIT)
        return Action.EDIT
