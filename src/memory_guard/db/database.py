"""The SQLite database: WAL, one writer, named migrations.

Writes go through one connection under one asyncio lock (SQLite allows one writer
anyway; queueing here instead of in SQLite avoids `database is locked` errors).
Reads use a second connection so they never wait behind a write transaction.

A transaction opened while the same task already holds one joins it (a unit of work,
db/unit_of_work.py): the store calls of one logical change commit together without passing the
connection around. db/postgres.py is the same surface on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from memory_guard.core.clock import to_text, utc_now
from memory_guard.db.migrations import MIGRATIONS, Dialect
from memory_guard.db.unit_of_work import holding, joinable

logger = logging.getLogger(__name__)

Params = Sequence[Any] | dict[str, Any]
Row = aiosqlite.Row

# Tables whose ids this process hands out before the row is written (see `Database.next_id`).
ALLOCATED_IDS = ("lookups", "messages")


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
    dialect = Dialect.SQLITE
    # Refusals that may pass (locked, busy): the bookkeeping retries a batch refused with one.
    transient: tuple[type[Exception], ...] = (sqlite3.OperationalError,)

    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        self.path = path
        self._writer = writer
        self._reader = reader
        self._write_lock = asyncio.Lock()
        self._next_ids: dict[str, int] = {}

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
            await database._seed_ids()
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
        for migration in MIGRATIONS:
            if migration.name in applied:
                continue
            async with self.transaction() as conn:
                # Asked again under the write lock: another process may have applied it since.
                async with conn.execute(
                    "SELECT 1 FROM schema_migrations WHERE name = ?", (migration.name,)
                ) as cursor:
                    if await cursor.fetchone() is not None:
                        continue
                for statement in migration.statements(Dialect.SQLITE):
                    await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                    (migration.name, to_text(utc_now())),
                )
            logger.info("applied migration %s", migration.name)

    async def _seed_ids(self) -> None:
        for table in ALLOCATED_IDS:
            # AUTOINCREMENT never reuses an id, even a deleted one's: neither does the allocator.
            row = await self.fetch_one(
                f"SELECT MAX(COALESCE((SELECT MAX(id) FROM {table}), 0), "
                "COALESCE((SELECT seq FROM sqlite_sequence WHERE name = ?), 0)) AS last",
                (table,),
            )
            self._next_ids[table] = (row["last"] if row else 0) + 1

    def next_id(self, table: str) -> int:
        """An id for a row of `table` that will be written later (bookkeeping after the answer).

        The answer names its lookup and message ids before they are stored, so this process
        hands them out: one serving process writes these tables (the single-writer design); a
        row of them inserted without an id from here would collide.
        """
        next_id = self._next_ids[table]
        self._next_ids[table] = next_id + 1
        return next_id

    async def reserve_id(self, table: str) -> int:
        """`next_id` under the name both backends share (PostgreSQL takes it from the table's
        sequence, since several replicas write there)."""
        return self.next_id(table)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction; rolled back whole if anything inside fails or is cancelled.

        Inside another transaction of the same task, it joins it: the outer one commits both.
        """
        if joinable(self) is not None:
            yield self._writer
            return
        async with self._write_lock:
            with holding(self, self._writer) as unit:
                await self._writer.execute("BEGIN IMMEDIATE")
                try:
                    yield self._writer
                except BaseException:
                    # Shielded so that a cancelled request cannot leave the transaction open.
                    await asyncio.shield(self._writer.rollback())
                    raise
                await asyncio.shield(self._writer.commit())
        for action in unit.on_commit:
            action()

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one write statement in its own transaction; return the affected row count."""
        async with self.transaction() as conn:
            cursor = await conn.execute(sql, params)
            return cursor.rowcount

    async def fetch_all(self, sql: str, params: Params = ()) -> list[Row]:
        # One trip to the connection's thread (execute, fetch and close would be three): reads
        # are on every answer's path.
        return list(await self._reader.execute_fetchall(sql, params))

    async def fetch_one(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of a read meant to give at most a few."""
        rows = await self.fetch_all(sql, params)
        return rows[0] if rows else None

    async def iterate(self, sql: str, params: Params = (), batch: int = 1000) -> AsyncIterator[Row]:
        async with self._reader.execute(sql, params) as cursor:
            while rows := await cursor.fetchmany(batch):
                for row in rows:
                    yield row

    async def batches(self, sql: str, params: Params = (), batch: int = 1000) -> AsyncIterator[list[Row]]:
        """The rows of a read, `batch` at a time (one thread round trip per batch, not per row)."""
        async with self._reader.execute(sql, params) as cursor:
            while rows := await cursor.fetchmany(batch):
                yield list(rows)

    async def ping(self) -> bool:
        row = await self.fetch_one("SELECT 1 AS ok")
        return row is not None and row["ok"] == 1


def placeholders(values: Iterable[object]) -> str:
    return ",".join("?" for _ in values)


# Values bound in one `IN (...)` at most: SQLite's limit of bound variables was 999 before 3.32,
# and a query may bind its list twice besides its other parameters.
IN_BATCH = 400

T = TypeVar("T")


def in_batches(values: Sequence[T], size: int = IN_BATCH) -> Iterator[Sequence[T]]:
    """`values` in slices small enough for one `IN (...)`."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
