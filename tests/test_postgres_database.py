"""The database layer on both backends: what a store may rely on, alike on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from memory_guard.db.bookkeeping import Bookkeeping, RowWriter
from memory_guard.db.placeholders import to_pyformat
from memory_guard.db.postgres import PostgresDatabase
from memory_guard.db.unit_of_work import after_commit
from memory_guard.ops.metrics import Metrics

LOOKUP = (
    "INSERT INTO lookups (tenant, agent, project, phase, decision, created_at) "
    "VALUES (?, 'agent', '', '', 'miss', ?)"
)


def test_placeholders_are_translated_outside_literals_identifiers_and_comments() -> None:
    assert to_pyformat("SELECT a FROM t WHERE b = ? AND c IN (?, ?)") == (
        "SELECT a FROM t WHERE b = %s AND c IN (%s, %s)"
    )
    assert to_pyformat("SELECT '?', 'it''s ?', \"odd?\" FROM t WHERE x = ?") == (
        "SELECT '?', 'it''s ?', \"odd?\" FROM t WHERE x = %s"
    )
    assert (
        to_pyformat("SELECT 1 -- why?\nWHERE y = ? /* or ? */") == "SELECT 1 -- why?\nWHERE y = %s /* or ? */"
    )
    # psycopg reads % everywhere, literals included.
    assert to_pyformat("SELECT 5 % 2, '100%' WHERE z LIKE ?") == "SELECT 5 %% 2, '100%%' WHERE z LIKE %s"


async def test_rows_read_by_position_and_by_name(any_database: Any) -> None:
    row = await any_database.fetch_one("SELECT 7 AS seven, 'x' AS ex, '50%' AS part, ? AS given", ("?",))
    assert row is not None
    assert (row[0], row["seven"], row[1], row["ex"], row["part"], row["given"]) == (
        7,
        7,
        "x",
        "x",
        "50%",
        "?",
    )
    assert await any_database.ping()


async def test_a_transaction_commits_whole_and_joins_an_outer_one(any_database: Any) -> None:
    db = any_database
    seen: list[str] = []
    async with db.transaction() as conn:
        await conn.execute(LOOKUP, ("acme", "t1"))
        async with db.transaction() as inner:  # joins: nothing is committed before the outer block ends
            assert inner is conn
            await inner.executemany(LOOKUP, [("acme", "t2"), ("acme", "t3")])
            after_commit(lambda: seen.append("committed"))
        assert seen == []
        assert await db.fetch_all("SELECT id FROM lookups") == [], "readers see only what is committed"
    assert seen == ["committed"]
    rows = await db.fetch_all("SELECT created_at FROM lookups ORDER BY id")
    assert [row["created_at"] for row in rows] == ["t1", "t2", "t3"]


async def test_a_failed_transaction_leaves_nothing_and_runs_no_after_commit(any_database: Any) -> None:
    db = any_database
    seen: list[str] = []

    async def write_then_fail() -> None:
        async with db.transaction() as conn:
            await conn.execute(LOOKUP, ("acme", "t1"))
            after_commit(lambda: seen.append("committed"))
            raise RuntimeError("midway")

    with pytest.raises(RuntimeError, match="midway"):
        await write_then_fail()
    assert seen == []
    assert await db.fetch_all("SELECT id FROM lookups") == []
    # The connection went back clean: the next transaction works.
    assert await db.execute(LOOKUP, ("acme", "t2")) == 1


async def test_a_refused_statement_rolls_the_whole_transaction_back(any_database: Any) -> None:
    db = any_database

    async def write_then_break_a_check() -> None:
        async with db.transaction() as conn:
            await conn.execute(LOOKUP, ("acme", "t1"))
            await conn.execute(LOOKUP.replace("'miss'", "'maybe'"), ("acme", "t2"))

    with pytest.raises(Exception, match=r"(?i)check"):
        await write_then_break_a_check()
    assert await db.fetch_all("SELECT id FROM lookups") == []


async def test_reserved_ids_grow_and_their_rows_are_written_later(any_database: Any) -> None:
    db = any_database
    first, second = await db.reserve_id("lookups"), await db.reserve_id("lookups")
    assert second > first
    written = LOOKUP.replace("(tenant,", "(id, tenant,").replace("VALUES (", "VALUES (?, ")
    await db.execute(written, (second, "acme", "later"))
    await db.execute(written, (first, "acme", "sooner"))
    rows = await db.fetch_all("SELECT id, created_at FROM lookups ORDER BY id")
    assert [(row["id"], row["created_at"]) for row in rows] == [(first, "sooner"), (second, "later")]


async def test_on_postgresql_a_row_written_without_an_id_never_takes_a_reserved_one(
    postgres_url: str,
) -> None:
    # Several replicas write there: the ids come from the table's sequence, not from a process.
    other_replica = await PostgresDatabase.open(postgres_url)
    db = await PostgresDatabase.open(postgres_url)
    try:
        reserved = {await db.reserve_id("lookups"), await other_replica.reserve_id("lookups")}
        async with db.transaction() as conn:
            cursor = await conn.execute(LOOKUP + " RETURNING id", ("acme", "t"))
            row = await cursor.fetchone()
        assert row is not None and row["id"] not in reserved
        with pytest.raises(ValueError, match="not reserved"):
            await db.reserve_id("responses")
    finally:
        await db.close()
        await other_replica.close()


async def test_batches_and_iterate_read_every_row_in_order(any_database: Any) -> None:
    db = any_database
    async with db.transaction() as conn:
        await conn.executemany(LOOKUP, [("acme", f"t{i:04d}") for i in range(2500)])
    batches = [batch async for batch in db.batches("SELECT created_at FROM lookups ORDER BY id", (), 1000)]
    assert [len(batch) for batch in batches] == [1000, 1000, 500]
    stamps = [
        row["created_at"]
        async for row in db.iterate("SELECT created_at FROM lookups WHERE tenant = ? ORDER BY id", ("acme",))
    ]
    assert stamps == [f"t{i:04d}" for i in range(2500)]


@dataclass(frozen=True)
class Served:
    """A row written after its answer, under the id the answer already named."""

    id: int
    tenant: str


def lookup_writer(db: Any) -> RowWriter:
    async def write(rows: Sequence[Served]) -> None:
        async with db.transaction() as conn:
            await conn.executemany(
                "INSERT INTO lookups (id, tenant, agent, project, phase, decision, created_at) "
                "VALUES (?, ?, 'agent', '', '', 'direct', 't')",
                [(row.id, row.tenant) for row in rows],
            )

    return RowWriter(Served, write)


def counted(metrics: Metrics, outcome: str) -> float:
    return metrics.registry.get_sample_value("memory_guard_bookkeeping_rows_total", {"outcome": outcome}) or 0


async def test_the_bookkeeping_writes_after_the_answer_on_either_backend(any_database: Any) -> None:
    metrics = Metrics()
    bookkeeping = Bookkeeping(any_database, [lookup_writer(any_database)], metrics)
    bookkeeping.start()
    try:
        ids = [await any_database.reserve_id("lookups") for _ in range(300)]
        for lookup_id in ids:
            await bookkeeping.put(Served(lookup_id, "acme"))
        await bookkeeping.flush()
    finally:
        await bookkeeping.close()
    rows = await any_database.fetch_all("SELECT id FROM lookups ORDER BY id")
    assert [row["id"] for row in rows] == ids
    assert (counted(metrics, "written"), counted(metrics, "dropped")) == (300, 0)


async def test_on_postgresql_lost_connections_cost_no_queued_row_and_no_read(
    postgres_url: str,
) -> None:
    db = await PostgresDatabase.open(postgres_url)
    metrics = Metrics()
    bookkeeping = Bookkeeping(db, [lookup_writer(db)], metrics)
    bookkeeping.start()
    try:
        lookup_id = await db.reserve_id("lookups")
        # The server ends every connection of the pool (a restart, a failover).
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        await bookkeeping.put(Served(lookup_id, "acme"))
        await bookkeeping.flush()
        # The read pool's connections were ended too: the read is asked again on a new one.
        rows = await db.fetch_all("SELECT id FROM lookups")
    finally:
        await bookkeeping.close()
        await db.close()
    assert [row["id"] for row in rows] == [lookup_id]
    assert (counted(metrics, "written"), counted(metrics, "dropped")) == (1, 0)
