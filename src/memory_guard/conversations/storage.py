"""The seam of conversation storage: messages, and the exchange written whole."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from memory_guard.clock import to_text


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


class ConversationStore(Protocol):
    async def exists(self, tenant: str, conversation_id: str) -> bool: ...

    async def messages(self, conversation_id: str) -> list[Message]: ...

    async def message(self, conversation_id: str, message_id: int) -> Message | None: ...

    async def append_exchange(
        self, tenant: str, conversation_id: str, question: NewMessage, answer: NewMessage, now: datetime
    ) -> tuple[int, int]:
        """Record a question and its answer together, or neither (creating the conversation if new)."""
        ...
