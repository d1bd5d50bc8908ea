"""What a client asks of a chat run, whichever route it came by (/chat or /v1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_guard.chat.learning_policy import CacheMode
from memory_guard.conversations.store import Message

NOT_RECORDED = 0  # the message_id of an answer whose exchange is not written (ChatRequest.record)


@dataclass(frozen=True, slots=True)
class ChatRequest:
    message: str
    conversation_id: str | None = None
    type: str | None = None
    agent: str | None = None
    project: str | None = None
    phase: str | None = None
    entreprise: dict[str, Any] | None = None
    cache: CacheMode = CacheMode.USE
    # The earlier messages as the client sent them (/v1 keeps no conversation of its own); a stored
    # conversation's history is read from the store instead.
    history: tuple[Message, ...] = ()
    # False: the exchange is not written to the tenant's conversations (/v1, whose client holds the
    # conversation and has no way to read one back); the done event's message_id is then 0.
    record: bool = True
