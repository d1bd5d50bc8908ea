"""The PostgreSQL database: db/database.py's surface on psycopg 3's async connection pools.

Several replicas share one database, so nothing here is process-wide the way SQLite's single
writer is: a transaction is a connection of the write pool inside `BEGIN ... COMMIT` (READ
COMMITTED), reads take a connection of the read pool in autocommit, and the ids an answer names
before its rows are written come from the table's own sequence (`reserve_id`). Two pools, as
SQLite has a writer and a reader: a transaction that reads through `fetch_*` (which, as on
SQLite, does not see its uncommitted writes) waits for a reader, never for another transaction
to end, so transactions cannot exhaust the pool waiting on each other.

The stores' SQL is the same text as on SQLite: `?` placeholders are translated in one place
(db/placeholders.py), and rows read by position and by name alike (`Row`). Migrations are the
shared list of db/migrations.py, applied under an advisory lock so that replicas starting
together apply each one once.

Not used by the service yet: db/backend.py lists the stores still to port.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import RowMaker
from psycopg_pool import AsyncConnectionPool

from memory_guard.core.clock import to_text, utc_now
from memory_guard.db.database import ALLOCATED_IDS
from memory_guard.db.migrations import MIGRATIONS, Dialect
from memory_guard.db.placeholders import to_pyformat
from memory_guard.db.unit_of_work import holding, joinable

logger = logging.getLogger(__name__)

Params = Sequence[Any]

# pg_advisory_lock's key for migrations: any fixed number, the same in every replica ("mg-migr").
MIGRATION_LOCK = 0x6D672D6D69677200

# Not settings yet: enough for one replica's bookkeeping writer, staff calls and answers' reads.
WRITE_POOL = 4
READ_POOL = 8
CONNECT_TIMEOUT_S = 10.0


class Row:
    """A row read by position (`row[0]`) or by column name (`row["id"]`), as sqlite3.Row is."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: dict[str, int], values: Sequence[Any]) -> None:
        self._names = names
        self._values = values

    def __getitem__(self, key: int | str) -> Any:
        return self._values[key if isinstance(key, int) else self._names[key]]

    def __len__(self) -> int:
        return len(self._values)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def keys(self) -> list[str]:
        return list(self._names)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._names, self._values, strict=True))!r})"


def _row_factory(cursor: AsyncCursor[Any]) -> RowMaker[Row]:
    names = {column.name: i for i, column in enumerate(cursor.description or ())}

    def make(values: Sequence[Any]) -> Row:
        return Row(names, values)

    return make


Conn = AsyncConnection[Row]


class Connection:
    """The connection a transaction hands the stores: the same calls as on SQLite, `?` SQL."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params = ()) -> AsyncCursor[Row]:
        """Run one statement; the cursor has `rowcount`, `fetchone()`, `fetchall()` (no `lastrowid`:
        write `INSERT ... RETURNING id`, which SQLite takes too)."""
        return await self._conn.execute(to_pyformat(sql), params)

    async def executemany(self, sql: str, params: Sequence[Params]) -> None:
        async with self._conn.cursor() as cursor:
            await cursor.executemany(to_pyformat(sql), params)


def _pool(url: str, name: str, size: int) -> AsyncConnectionPool[Conn]:
    return AsyncConnectionPool(
        url,
        min_size=1,
        max_size=size,
        open=False,
        connection_class=Conn,
        kwargs={"autocommit": True, "row_factory": _row_factory},
        name=name,
    )


class PostgresDatabase:
    dialect = Dialect.POSTGRES
    # A lost connection, a serialization failure or deadlock, a pool with no free connection in
    # time: all OperationalError, all worth retrying later (the bookkeeping does).
    transient: tuple[type[Exception], ...] = (psycopg.OperationalError,)

    def __init__(self, writes: AsyncConnectionPool[Conn], reads: AsyncConnectionPool[Conn]) -> None:
        self._writes = writes
        self._reads = reads

    @classmethod
    async def open(cls, url: str, *, writers: int = WRITE_POOL, readers: int = READ_POOL) -> PostgresDatabase:
        """Connect and migrate; fails within CONNECT_TIMEOUT_S when the server cannot be reached."""
        pools = [_pool(url, "memory-guard-writes", writers), _pool(url, "memory-guard-reads", readers)]
        try:
            for pool in pools:
                await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
            database = cls(*pools)
            await database._migrate()
        except BaseException:
            for pool in pools:
                await pool.close()
            raise
        return database

    async def close(self) -> None:
        await self._writes.close()
        await self._reads.close()

    async def _migrate(self) -> None:
        async with self._writes.connection() as conn:
            # Session-level: held across the migrations' own transactions, and released by the
            # server if this process dies holding it.
            await conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
            try:
                await conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations "
                    "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
                )
                cursor = await conn.execute("SELECT name FROM schema_migrations")
                applied = {row["name"] for row in await cursor.fetchall()}
                for migration in MIGRATIONS:
                    if migration.name in applied:
                        continue
                    async with conn.transaction():  # PostgreSQL's DDL is transactional: all or nothing
                        for statement in migration.statements(Dialect.POSTGRES):
                            await conn.execute(statement)
                        await conn.execute(
                            "INSERT INTO schema_migrations (name, applied_at) VALUES (%s, %s)",
                            (migration.name, to_text(utc_now())),
                        )
                    logger.info("applied migration %s", migration.name)
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        """One transaction on a pooled connection; rolled back whole if anything inside fails or
        is cancelled. Inside another of the same task, it joins it: the outer one commits both."""
        current = joinable(self)
        if current is not None:
            yield current.connection
            return
        async with self._writes.connection() as conn:
            connection = Connection(conn)
            with holding(self, connection) as unit:
                async with conn.transaction():
                    yield connection
        for action in unit.on_commit:
            action()

    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one write statement in its own transaction; return the affected row count."""
        async with self.transaction() as conn:
            cursor = await conn.execute(sql, params)
            return cursor.rowcount

    async def fetch_all(self, sql: str, params: Params = ()) -> list[Row]:
        # A read is asked again on another connection when the server had closed the one taken
        # (a restart, a failover): the pool drops a broken connection when it comes back, and
        # checking each one before use would cost a round trip on every answer.
        query = to_pyformat(sql)
        for _ in range(READ_POOL):
            async with self._reads.connection() as conn:
                try:
                    cursor = await conn.execute(query, params)
                    return await cursor.fetchall()
                except psycopg.OperationalError:
                    if not conn.broken:
                        raise
        async with self._reads.connection() as conn:
            cursor = await conn.execute(query, params)
            return await cursor.fetchall()

    async def fetch_one(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of a read meant to give at most a few."""
        rows = await self.fetch_all(sql, params)
        return rows[0] if rows else None

    async def iterate(self, sql: str, params: Params = (), batch: int = 1000) -> AsyncIterator[Row]:
        async for rows in self.batches(sql, params, batch):
            for row in rows:
                yield row

    async def batches(self, sql: str, params: Params = (), batch: int = 1000) -> AsyncIterator[list[Row]]:
        """The rows of a read, `batch` at a time, from a server-side cursor: a million rows are
        never all in memory at once."""
        async with (
            self._reads.connection() as conn,
            conn.transaction(),
            conn.cursor(name="memory_guard_batches") as cursor,
        ):
            await cursor.execute(to_pyformat(sql), params)
            while rows := await cursor.fetchmany(batch):
                yield rows

    async def reserve_id(self, table: str) -> int:
        """An id for a row of `table` that will be written later (bookkeeping after the answer),
        from the table's sequence: unique across replicas, and in the order they were asked for
        (a conversation's messages keep their order whichever replica wrote them)."""
        if table not in ALLOCATED_IDS:
            raise ValueError(f"ids of {table} are not reserved ahead")
        row = await self.fetch_one("SELECT nextval(pg_get_serial_sequence(?, 'id')) AS id", (table,))
        assert row is not None
        return int(row["id"])

    async def ping(self) -> bool:
        row = await self.fetch_one("SELECT 1 AS ok")
        return row is not None and row["ok"] == 1
