"""All SQL of conversations and their messages, on SQLite."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

import aiosqlite

from memory_guard.conversations.store import Exchange, Message, NewMessage
from memory_guard.core.clock import from_text, to_text
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

    def reserve_ids(self) -> tuple[int, int]:
        return self._db.next_id("messages"), self._db.next_id("messages")

    async def append_exchange(
        self, tenant: str, conversation_id: str, question: NewMessage, answer: NewMessage, now: datetime
    ) -> tuple[int, int]:
        """Record a question and its answer together, or neither (creating the conversation if new)."""
        exchange = Exchange(tenant, conversation_id, question, answer, self.reserve_ids(), now)
        await self.append_exchanges([exchange])
        return exchange.ids

    async def append_exchanges(self, exchanges: Sequence[Exchange]) -> None:
        async with self._db.transaction() as conn:
            for exchange in exchanges:
                await _write_exchange(conn, exchange)


async def _write_exchange(conn: aiosqlite.Connection, exchange: Exchange) -> None:
    stamp = to_text(exchange.at)
    asked = to_text(exchange.question.created_at or exchange.at)
    # MAX: an exchange written after the answer may reach the table after a later one.
    await conn.execute(
        "INSERT INTO conversations (id, tenant, created_at, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET updated_at = MAX(updated_at, excluded.updated_at)",
        (exchange.conversation_id, exchange.tenant, asked, stamp),
    )
    await conn.executemany(
        "INSERT INTO messages (id, conversation_id, role, type, content, created_at, entry_id, metadata) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                message_id,
                exchange.conversation_id,
                message.role,
                message.type,
                message.content,
                to_text(message.created_at) if message.created_at else stamp,
                message.entry_id,
                json.dumps(message.metadata),
            )
            for message_id, message in zip(exchange.ids, (exchange.question, exchange.answer), strict=True)
        ],
    )
