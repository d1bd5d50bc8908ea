"""All SQL of conversations and their messages, on SQLite."""

from __future__ import annotations

import json
from datetime import datetime

from memory_guard.clock import from_text, to_text
from memory_guard.conversations.storage import Message, NewMessage
from memory_guard.db.database import Database, Row


def _row_to_message(row: Row) -> Message:
    return Message(
        id=row["id"],
        conversation_id=row["conversation_id"],
        role=row["role"],
        type=row["type"],
        content=row["content"],
        created_at=from_text(row["created_at"]),
        entry_id=row["entry_id"],
        metadata=json.loads(row["metadata"]),
    )


_MESSAGE_COLUMNS = "id, conversation_id, role, type, content, created_at, entry_id, metadata"


class SqliteConversationStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def exists(self, tenant: str, conversation_id: str) -> bool:
        row = await self._db.fetch_one(
            "SELECT 1 FROM conversations WHERE id = ? AND tenant = ?", (conversation_id, tenant)
        )
        return row is not None

    async def messages(self, conversation_id: str) -> list[Message]:
        rows = await self._db.fetch_all(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY id",
            (conversation_id,),
        )
        return [_row_to_message(row) for row in rows]

    async def message(self, conversation_id: str, message_id: int) -> Message | None:
        row = await self._db.fetch_one(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? AND id = ?",
            (conversation_id, message_id),
        )
        return _row_to_message(row) if row else None

    async def append_exchange(
        self, tenant: str, conversation_id: str, question: NewMessage, answer: NewMessage, now: datetime
    ) -> tuple[int, int]:
        """Record a question and its answer together, or neither (creating the conversation if new)."""
        stamp = to_text(now)
        async with self._db.transaction() as conn:
            await conn.execute(
                "INSERT INTO conversations (id, tenant, created_at, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at",
                (conversation_id, tenant, stamp, stamp),
            )
            ids: list[int] = []
            for message in (question, answer):
                cursor = await conn.execute(
                    "INSERT INTO messages (conversation_id, role, type, content, created_at, entry_id, "
                    "metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        conversation_id,
                        message.role,
                        message.type,
                        message.content,
                        stamp,
                        message.entry_id,
                        json.dumps(message.metadata),
                    ),
                )
                assert cursor.lastrowid is not None
                ids.append(cursor.lastrowid)
        return ids[0], ids[1]
