"""What the memory holds: entries, their scope and their lifecycle values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from memory_guard.core.clock import to_text
from memory_guard.core.errors import NotFound
from memory_guard.core.scope import Scope


class Status(StrEnum):
    AUTO = "auto"
    VALIDATED = "validated"
    OBSOLETE = "obsolete"


class Source(StrEnum):
    LEARNED = "learned"
    STAFF = "staff"
    FAQ = "faq"
    DOCUMENT = "document"


@dataclass(slots=True)
class Entry:
    id: int
    scope: Scope
    question: str
    answer: str
    status: Status
    source: Source
    key_hash: str
    created_at: datetime
    updated_at: datetime
    usage_count: int = 0
    tags: list[str] = field(default_factory=list)
    last_used_at: datetime | None = None
    expires_at: datetime | None = None
    embedding_model: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def effective_expiry(self, max_age: timedelta) -> datetime:
        """An entry ages from its last update; an explicit expiry may cut that short."""
        aged_out = self.updated_at + max_age
        return min(aged_out, self.expires_at) if self.expires_at else aged_out

    def servable(self, now: datetime, max_age: timedelta) -> bool:
        return self.status is not Status.OBSOLETE and now < self.effective_expiry(max_age)

    def to_public(self, max_age: timedelta) -> dict[str, Any]:
        """The entry as docs/API.md lists its fields."""
        return {
            "id": self.id,
            "question": self.question,
            "answer": self.answer,
            "status": self.status.value,
            "source": self.source.value,
            "agent": self.scope.agent,
            "project": self.scope.project,
            "phase": self.scope.phase,
            "tags": list(self.tags),
            "usage_count": self.usage_count,
            "created_at": to_text(self.created_at),
            "updated_at": to_text(self.updated_at),
            "last_used_at": to_text(self.last_used_at) if self.last_used_at else None,
            "expires_at": to_text(self.effective_expiry(max_age)),
            "embedding_model": self.embedding_model,
            "metadata": dict(self.metadata),
        }


def entry_not_found(entry_id: int) -> NotFound:
    return NotFound(f"no memory entry {entry_id}", code="entry_not_found")


def clean_tags(tags: Sequence[str]) -> list[str]:
    """Tags as every entry keeps them, however they came in (staff, an import): trimmed, in their
    order, without blanks or repeats. Their length is bounded where they enter (`bounds.Tag`)."""
    cleaned: list[str] = []
    for tag in (t.strip() for t in tags):
        if tag and tag not in cleaned:
            cleaned.append(tag)
    return cleaned
