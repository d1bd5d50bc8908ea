"""The SQLite database: WAL, one writer, named migrations.

Writes go through one connection under one asyncio lock (SQLite allows one writer
anyway; queueing here instead of in SQLite avoids `database is locked` errors).
Reads use a second connection so they never wait behind a write transaction.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from memory_guard.clock import to_text, utc_now
from memory_guard.db.migrations import MIGRATIONS

logger = logging.getLogger(__name__)

Params = Sequence[Any] | dict[str, Any]
Row = aiosqlite.Row


async def _pragma(conn: aiosqlite.Connection, statement: str) -> None:
    # Closing the cursor matters: an unfinished PRAGMA statement keeps a lock on the file.
    async with conn.execute(statement) as cursor:
        await cursor.fetchall()


async def _connect(path: Path, *pragmas: str) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None)
    try:
        conn.row_factory = aiosqlite.Row
        for statement in (
            "PRAGMA busy_timeout = 5000",
            *pragmas,
            "PRAGMA foreign_keys = ON",
            "PRAGMA synchronous = NORMAL",
        ):
            await _pragma(conn, statement)
    except BaseException:
        await conn.close()
        raise
    return conn


class Database:
    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        self.path = path
        self._writer = writer
        self._reader = reader
        self._write_lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path) -> Database:
        path.parent.mkdir(parents=True, exist_ok=True)
        writer = await _connect(path, "PRAGMA journal_mode = WAL")
        try:
            reader = await _connect(path)
        except BaseException:
            await writer.close()
            raise
        database = cls(path, writer, reader)
        try:
            await database._migrate()
        except BaseException:
            await database.close()
            raise
        return database

    async def close(self) -> None:
        await self._reader.close()
        await self._writer.close()

    async def _migrate(self) -> None:
        await _pragma(
            self._writer,
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)",
        )
        applied = {row["name"] for row in await self.fetch_all("SELECT name FROM schema_migrations", ())}
        for name, sql in MIGRATIONS:
            if name in applied:
                continue
            async with self.transaction() as conn:
                for statement in (s.strip() for s in sql.split(";")):
                    if statement:
                        await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                    (name, to_text(utc_now())),
                )
            logger.info("applied migration %s", name)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction; rolled back whole if anything inside fails or is cancelled."""
        async with self._write_lock:
            await self._writer.execute("BEGIN IMMEDIATE")
            try:
                yield self._writer
            except BaseException:
                # Shielded so that a cancelled request cannot leave the transaction open.
                await asyncio.shield(self._writer.rollback())
                raise
            await asyncio.shield(self._writer.commit())

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one write statement in its own transaction; return the affected row count."""
        async with self.transaction() as conn:
            cursor = await conn.execute(sql, params)
            return cursor.rowcount

    async def fetch_all(self, sql: str, params: Params = ()) -> list[Row]:
        async with self._reader.execute(sql, params) as cursor:
            return list(await cursor.fetchall())

    async def fetch_one(self, sql: str, params: Params = ()) -> Row | None:
        async with self._reader.execute(sql, params) as cursor:
            row: Row | None = await cursor.fetchone()
            return row

    async def iterate(self, sql: str, params: Params = (), batch: int = 1000) -> AsyncIterator[Row]:
        async with self._reader.execute(sql, params) as cursor:
            while rows := await cursor.fetchmany(batch):
                for row in rows:
                    yield row

    async def ping(self) -> bool:
        row = await self.fetch_one("SELECT 1 AS ok")
        return row is not None and row["ok"] == 1


def placeholders(values: Iterable[object]) -> str:
    return ",".join("?" for _ in values)
