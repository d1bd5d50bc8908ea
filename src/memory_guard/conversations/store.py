"""The seam of conversation storage: messages, and the exchange written whole."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from memory_guard.core.clock import to_text


@dataclass(frozen=True, slots=True)
class Message:
    id: int
    conversation_id: str
    role: str
    type: str
    content: str
    created_at: datetime
    entry_id: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "role": self.role,
            "type": self.type,
            "content": self.content,
            "created_at": to_text(self.created_at),
        }


@dataclass(frozen=True, slots=True)
class NewMessage:
    role: str
    type: str
    content: str
    entry_id: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # When it was said, if not when the exchange is recorded: a question is asked before its answer.
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Exchange:
    """A question and its answer to record under ids given out beforehand (see `reserve_ids`)."""

    tenant: str
    conversation_id: str
    question: NewMessage
    answer: NewMessage
    ids: tuple[int, int]
    at: datetime

    def messages(self) -> list[Message]:
        """The two messages as they will read once written."""
        return [
            Message(
                self.ids[i],
                self.conversation_id,
                m.role,
                m.type,
                m.content,
                m.created_at or self.at,
                m.entry_id,
                m.metadata,
            )
            for i, m in enumerate((self.question, self.answer))
        ]


class ConversationStore(Protocol):
    async def exists(self, tenant: str, conversation_id: str) -> bool: ...

    async def messages(self, conversation_id: str) -> list[Message]: ...

    async def message(self, conversation_id: str, message_id: int) -> Message | None: ...

    def reserve_ids(self) -> tuple[int, int]:
        """The ids of a question and its answer, known before they are written."""
        ...

    async def append_exchange(
        self, tenant: str, conversation_id: str, question: NewMessage, answer: NewMessage, now: datetime
    ) -> tuple[int, int]:
        """Record a question and its answer together, or neither (creating the conversation if new)."""
        ...

    async def append_exchanges(self, exchanges: Sequence[Exchange]) -> None:
        """Record exchanges whose ids were reserved, all in one transaction."""
        ...
