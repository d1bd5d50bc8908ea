"""The named migrations on PostgreSQL: the same schema as on SQLite, applied once, even by
replicas that start together."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from memory_guard.db.database import Database
from memory_guard.db.migrations import MIGRATIONS, Dialect, Migration
from memory_guard.db.postgres import MIGRATION_LOCK, PostgresDatabase

# SQLite's declared type -> what information_schema says of its PostgreSQL column.
PG_TYPE = {"INTEGER": "bigint", "REAL": "double precision", "BLOB": "bytea", "TEXT": "text"}


def sqlite_schema(path: Path) -> tuple[dict[str, list[tuple[str, str, bool]]], set[str]]:
    with sqlite3.connect(path) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        columns = {
            table: [
                # A primary key column is NOT NULL on PostgreSQL whatever it says.
                (name, PG_TYPE[declared], bool(notnull or pk))
                for _, name, declared, notnull, _, pk in conn.execute(f"PRAGMA table_info({table})")
            ]
            for table in tables
        }
        indexes = {
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'"
            )
        }
    return columns, indexes


def postgres_schema(url: str) -> tuple[dict[str, list[tuple[str, str, bool]]], set[str]]:
    with psycopg.connect(url) as conn:
        columns: dict[str, list[tuple[str, str, bool]]] = {}
        for table, name, data_type, nullable in conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"
        ):
            columns.setdefault(table, []).append((name, data_type, nullable == "NO"))
        indexes = {
            name
            for (name,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname NOT LIKE '%_pkey'"
            )
        }
    return columns, indexes


async def test_every_migration_gives_the_same_tables_and_columns_on_both(
    tmp_path: Path, postgres_url: str
) -> None:
    sqlite = await Database.open(tmp_path / "memory.db")
    await sqlite.close()
    postgres = await PostgresDatabase.open(postgres_url)
    await postgres.close()

    sqlite_columns, sqlite_indexes = sqlite_schema(tmp_path / "memory.db")
    postgres_columns, postgres_indexes = postgres_schema(postgres_url)
    assert postgres_columns == sqlite_columns
    assert postgres_indexes == sqlite_indexes
    assert "judge_calls" in postgres_columns and "response_variants" in postgres_columns


async def test_the_constraints_hold_on_postgresql(postgres_url: str) -> None:
    db = await PostgresDatabase.open(postgres_url)
    try:
        row = (
            "k",
            "q",
            "a",
            "2026-01-01T00:00:00.000000Z",
            "acme",
            "agent",
            "2026-01-01T00:00:00.000000Z",
        )
        insert = (
            "INSERT INTO responses (key_hash, question, answer, created_at, tenant, agent, status, source, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'staff', ?)"
        )
        with pytest.raises(psycopg.errors.CheckViolation):
            await db.execute(insert, (*row[:6], "forgotten", row[6]))
        await db.execute(insert, (*row[:6], "auto", row[6]))
        entry = await db.fetch_one("SELECT id, metadata, project, usage_count FROM responses")
        assert entry is not None
        assert (entry["metadata"], entry["project"], entry["usage_count"]) == ("{}", "", 0)
        # A correction must carry its answer, the others must not (0006's table CHECK).
        proposal = (
            "INSERT INTO feedback_proposals (tenant, entry_id, conversation_id, message_id, kind, "
            "proposed_answer, base_question, base_answer, base_status, proposed_by, created_at) "
            "VALUES ('acme', ?, 'c', 1, ?, ?, 'q', 'a', 'auto', 'x', 't')"
        )
        with pytest.raises(psycopg.errors.CheckViolation):
            await db.execute(proposal, (entry["id"], "correct", None))
        await db.execute(proposal, (entry["id"], "correct", "better"))
        # Variants go with their entry.
        await db.execute(
            "INSERT INTO response_variants (response_id, tenant, question, key_hash, status, origin, "
            "created_at, created_by, updated_at) "
            "VALUES (?, 'acme', 'q2', 'k2', 'learned', 'o', 't', 'x', 't')",
            (entry["id"],),
        )
        await db.execute("DELETE FROM responses WHERE id = ?", (entry["id"],))
        assert await db.fetch_all("SELECT id FROM response_variants") == []
    finally:
        await db.close()


async def test_migrating_again_applies_nothing(postgres_url: str) -> None:
    await (await PostgresDatabase.open(postgres_url)).close()
    with psycopg.connect(postgres_url) as conn:
        first = conn.execute("SELECT name, applied_at FROM schema_migrations ORDER BY name").fetchall()
    await (await PostgresDatabase.open(postgres_url)).close()
    with psycopg.connect(postgres_url) as conn:
        again = conn.execute("SELECT name, applied_at FROM schema_migrations ORDER BY name").fetchall()
    assert [name for name, _ in first] == [migration.name for migration in MIGRATIONS]
    assert again == first


MIGRATE = """
import asyncio, sys
from memory_guard.db.postgres import PostgresDatabase

async def main():
    await (await PostgresDatabase.open(sys.argv[1])).close()

asyncio.run(main())
"""


def test_replicas_starting_together_apply_each_migration_once(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as holder:
        # Held here, the lock lines both replicas up at the start of their migrations.
        holder.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
        replicas = [
            subprocess.Popen(
                [sys.executable, "-c", MIGRATE, postgres_url],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            for _ in range(2)
        ]
        try:
            deadline = time.monotonic() + 60
            while _waiting_for_the_lock(holder) < 2:
                failed = [replica for replica in replicas if replica.poll() is not None]
                assert not failed, "a replica went on without waiting for the migration lock"
                assert time.monotonic() < deadline, "the replicas never asked for the migration lock"
                time.sleep(0.05)
            holder.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
            outputs = [replica.communicate(timeout=120)[0].decode() for replica in replicas]
        finally:
            for replica in replicas:
                replica.kill()
        assert [replica.returncode for replica in replicas] == [0, 0], outputs
        rows = holder.execute(
            "SELECT name, COUNT(*) FROM schema_migrations GROUP BY name ORDER BY name"
        ).fetchall()
    assert rows == [(migration.name, 1) for migration in MIGRATIONS]


def _waiting_for_the_lock(conn: psycopg.Connection[tuple[int]]) -> int:
    row = conn.execute("SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").fetchone()
    return row[0] if row else 0


def test_a_migration_with_postgresql_text_only_is_nothing_to_do_on_sqlite() -> None:
    # How pgvector's column will come: recorded as applied on SQLite, run on PostgreSQL.
    vector = Migration("0010_vectors", "", postgres="CREATE EXTENSION IF NOT EXISTS vector; SELECT 1")
    assert vector.statements(Dialect.SQLITE) == []
    assert vector.statements(Dialect.POSTGRES) == ["CREATE EXTENSION IF NOT EXISTS vector", "SELECT 1"]


def test_each_dialect_gets_its_own_column_types() -> None:
    first = MIGRATIONS[0]
    assert "INTEGER PRIMARY KEY AUTOINCREMENT" in first.statements(Dialect.SQLITE)[0]
    assert "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" in first.statements(Dialect.POSTGRES)[0]
    assert all("$" not in s for m in MIGRATIONS for d in Dialect for s in m.statements(d))


async def test_on_sqlite_a_migration_another_process_applied_meanwhile_is_not_applied_again(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA journal_mode = WAL")
    other.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    # The other process holds the write lock: this one reads that nothing is applied, then waits.
    other.execute("BEGIN IMMEDIATE")
    opening = asyncio.create_task(Database.open(path))
    await asyncio.sleep(0.5)  # (were it not waiting yet, it would find every migration applied)
    for migration in MIGRATIONS:
        for statement in migration.statements(Dialect.SQLITE):
            other.execute(statement)
        other.execute("INSERT INTO schema_migrations VALUES (?, 'then')", (migration.name,))
    other.execute("COMMIT")
    db = await opening
    await db.close()
    rows = other.execute("SELECT name, applied_at FROM schema_migrations ORDER BY name").fetchall()
    other.close()
    assert rows == [(migration.name, "then") for migration in MIGRATIONS]
