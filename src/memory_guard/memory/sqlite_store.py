"""All SQL of the response memory (the `responses` table), on SQLite.

How an entry maps to a row is in `entry_rows.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Literal

import aiosqlite

from memory_guard.core.clock import to_text
from memory_guard.core.decision import DECISIONS
from memory_guard.core.scope import Scope
from memory_guard.db.database import Database, Row, in_batches, placeholders
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Action, Change
from memory_guard.memory.audit_store import write_event
from memory_guard.memory.entry import Entry, Source, Status
from memory_guard.memory.entry_rows import (
    COLUMNS,
    INSERT,
    SECONDS,
    VISIBLE,
    blob_to_vector,
    column_value,
    filter_sql,
    insert_params,
    row_to_entry,
    seconds_of,
    vector_to_blob,
)
from memory_guard.memory.lookups import LoggedLookup, LookupTotals
from memory_guard.memory.store import EntryFilter, IndexRow, NewEntry
from memory_guard.memory.variant_store import insert_variants


async def _fetch_row(
    conn: aiosqlite.Connection, tenant: str, entry_id: int, pending: str | None = None
) -> Row | None:
    """An entry's row read inside a write transaction, to see what the transaction sees; the rows
    of an unfinished import only by that import (`pending`)."""
    async with conn.execute(
        f"SELECT {COLUMNS} FROM responses WHERE id = ? AND tenant = ? AND pending_import IS ?",
        (entry_id, tenant, pending),
    ) as cursor:
        row: Row | None = await cursor.fetchone()
        return row


class SqliteMemoryStore:
    """The embedded `MemoryStore`: one SQLite file, WAL, one writer."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def insert(self, new: NewEntry, now: datetime, change: Change | None = None) -> Entry:
        return (await self.insert_many([new], now, change))[0]

    async def insert_many(
        self,
        news: Sequence[NewEntry],
        now: datetime,
        change: Change | None = None,
        pending: str | None = None,
    ) -> list[Entry]:
        """Insert every entry or none (one transaction), each with its audit event.

        `pending` names an unfinished import: its rows and events stay invisible until it is
        published, or go with it (`import_store.SqliteImportStaging`).
        """
        stamp = to_text(now)
        rows: list[Row] = []
        async with self._db.transaction() as conn:
            for new in news:
                cursor = await conn.execute(INSERT, insert_params(new, stamp, pending))
                assert cursor.lastrowid is not None
                row = await _fetch_row(conn, new.scope.tenant, cursor.lastrowid, pending)
                assert row is not None
                if change is not None:
                    await write_event(conn, new.scope.tenant, row["id"], change, None, row, now)
                    if pending is not None:
                        await conn.execute(
                            "UPDATE audit_events SET pending_import = ? WHERE id = last_insert_rowid()",
                            (pending,),
                        )
                if new.variants:
                    # Their events are the variants' own (add_variant), marked as the entry's are.
                    added = replace(change, action=Action.ADD_VARIANT) if change is not None else None
                    await insert_variants(
                        conn, new.scope.tenant, row["id"], new.variants, now, added, pending
                    )
                rows.append(row)
        return [row_to_entry(row) for row in rows]

    async def get(self, tenant: str, entry_id: int) -> Entry | None:
        row = await self._db.fetch_one(
            f"SELECT {COLUMNS} FROM responses WHERE id = ? AND tenant = ? AND {VISIBLE}", (entry_id, tenant)
        )
        return row_to_entry(row) if row else None

    async def get_many(self, tenant: str, ids: Sequence[int]) -> dict[int, Entry]:
        if not ids:
            return {}
        rows = await self._db.fetch_all(
            f"SELECT {COLUMNS} FROM responses WHERE tenant = ? AND {VISIBLE} AND id IN ({placeholders(ids)})",
            (tenant, *ids),
        )
        return {row["id"]: row_to_entry(row) for row in rows}

    async def find_by_key(self, tenant: str, key: str) -> list[Entry]:
        """Entries with this exact normalized question in this scope, newest first."""
        rows = await self._db.fetch_all(
            f"SELECT {COLUMNS} FROM responses WHERE key_hash = ? AND tenant = ? AND {VISIBLE} "
            "ORDER BY created_at DESC, id DESC",
            (key, tenant),
        )
        return [row_to_entry(row) for row in rows]

    async def list_entries(
        self, tenant: str, where: EntryFilter, limit: int, before_id: int | None
    ) -> list[Entry]:
        """Newest first; `before_id` is the cursor (ids only grow)."""
        clauses, params = filter_sql(tenant, where)
        if before_id is not None:
            clauses.append("id < ?")
            params.append(before_id)
        rows = await self._db.fetch_all(
            f"SELECT {COLUMNS} FROM responses WHERE {' AND '.join(clauses)} ORDER BY id DESC LIMIT ?",
            (*params, limit),
        )
        return [row_to_entry(row) for row in rows]

    async def index_rows(self, model_id: str, max_age: timedelta) -> AsyncIterator[list[IndexRow]]:
        """Every servable-status vector made by `model_id`, for loading the index, batch by batch.

        SQLite turns the dates into POSIX seconds (to the millisecond, plenty for an expiry and
        for telling the newest of tied entries); only a date it cannot read is parsed here.
        """
        scopes: dict[tuple[str, str, str, str], Scope] = {}
        age = max_age.total_seconds()
        async for rows in self._db.batches(
            "SELECT id, tenant, agent, project, phase, embedding, "
            f"{SECONDS.format('created_at')} AS created, "
            f"MIN({SECONDS.format('updated_at')} + ?, "
            f"COALESCE({SECONDS.format('expires_at')}, 9e999)) AS expires, "
            "created_at, updated_at, expires_at "
            "FROM responses WHERE embedding_model = ? AND status != 'obsolete' AND embedding IS NOT NULL "
            f"AND {VISIBLE}",
            (age, model_id),
            batch=5000,
        ):
            batch: list[IndexRow] = []
            for row in rows:
                key = (row[1], row[2], row[3], row[4])
                scope = scopes.get(key) or scopes.setdefault(key, Scope(*key))
                created, expires = row[6], row[7]
                if created is None or expires is None:  # a date SQLite cannot read (legacy form)
                    created, expires = seconds_of(row, max_age)
                batch.append(IndexRow(row[0], scope, row[5], created, expires))
            yield batch

    async def search_vectors(
        self, tenant: str, where: EntryFilter, model_id: str
    ) -> list[tuple[int, Vectors]]:
        clauses, params = filter_sql(tenant, where)
        rows = await self._db.fetch_all(
            f"SELECT id, embedding FROM responses WHERE {' AND '.join(clauses)} "
            "AND embedding_model = ? AND embedding IS NOT NULL",
            (*params, model_id),
        )
        return [(row["id"], blob_to_vector(row["embedding"])) for row in rows]

    async def vector(self, entry_id: int) -> tuple[Vectors, str] | None:
        row = await self._db.fetch_one(
            f"SELECT embedding, embedding_model FROM responses WHERE id = ? AND {VISIBLE}", (entry_id,)
        )
        if row is None or row["embedding"] is None:
            return None
        return blob_to_vector(row["embedding"]), row["embedding_model"]

    async def update(
        self, tenant: str, entry_id: int, now: datetime, change: Change | None = None, **fields: Any
    ) -> Entry | None:
        """Set columns by name (`answer`, `status`, `tags`, `metadata`...); `vector` sets the embedding."""
        assignments = ["updated_at = ?"]
        params: list[Any] = [to_text(now)]
        for name, value in fields.items():
            if name == "vector":
                assignments.append("embedding = ?")
                params.append(vector_to_blob(value))
                continue
            assignments.append(f"{name} = ?")
            params.append(column_value(name, value))
        async with self._db.transaction() as conn:
            before = await _fetch_row(conn, tenant, entry_id)
            if before is None:
                return None
            await conn.execute(
                f"UPDATE responses SET {', '.join(assignments)} WHERE id = ? AND tenant = ?",
                (*params, entry_id, tenant),
            )
            after = await _fetch_row(conn, tenant, entry_id)
            assert after is not None
            if change is not None:
                await write_event(conn, tenant, entry_id, change, before, after, now)
        return row_to_entry(after)

    def reserve_lookup_id(self) -> int:
        return self._db.next_id("lookups")

    async def record_lookups(self, lookups: Sequence[LoggedLookup]) -> None:
        """Log decisions under their given ids and count the usage they imply, in one transaction."""
        async with self._db.transaction() as conn:
            await conn.executemany(
                "UPDATE responses SET usage_count = usage_count + ?, last_used_at = ? WHERE id = ?",
                [
                    (logged.usage, to_text(logged.at), entry_id)
                    for logged in lookups
                    for entry_id in logged.used_ids
                ],
            )
            await conn.executemany(
                "INSERT INTO lookups (id, tenant, agent, project, phase, decision, entry_id, score, "
                "tokens_saved, created_at, question, verdict, reason, probability, verified_by, variant_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        logged.id,
                        logged.record.scope.tenant,
                        logged.record.scope.agent,
                        logged.record.scope.project,
                        logged.record.scope.phase,
                        logged.record.decision,
                        logged.record.entry_id,
                        logged.record.score,
                        logged.record.tokens_saved,
                        to_text(logged.at),
                        logged.record.question,
                        logged.record.verdict,
                        logged.record.reason,
                        logged.record.probability,
                        logged.record.verified_by,
                        logged.record.variant_id,
                    )
                    for logged in lookups
                ],
            )

    async def lookup_totals(self, tenant: str) -> LookupTotals:
        rows = await self._db.fetch_all(
            "SELECT decision, COUNT(*) AS n, COALESCE(SUM(tokens_saved), 0) AS saved FROM lookups "
            "WHERE tenant = ? GROUP BY decision",
            (tenant,),
        )
        counts = dict.fromkeys(DECISIONS, 0)
        counts.update({row["decision"]: row["n"] for row in rows})
        return LookupTotals(by_decision=counts, tokens_saved=sum(row["saved"] for row in rows))

    async def delete(self, tenant: str, entry_id: int, now: datetime, change: Change | None = None) -> bool:
        async with self._db.transaction() as conn:
            before = await _fetch_row(conn, tenant, entry_id)
            if before is None:
                return False
            await conn.execute("DELETE FROM responses WHERE id = ?", (entry_id,))
            if change is not None:
                await write_event(conn, tenant, entry_id, change, before, None, now)
        return True

    async def delete_expired(
        self, tenant: str, aged_before: datetime, now: datetime, change: Change | None = None
    ) -> list[int]:
        """Remove entries not updated since `aged_before` or past their explicit expiry."""
        condition = (
            f"tenant = ? AND {VISIBLE} AND (updated_at < ? OR (expires_at IS NOT NULL AND expires_at <= ?))"
        )
        params = (tenant, to_text(aged_before), to_text(now))
        async with self._db.transaction() as conn:
            async with conn.execute(f"SELECT {COLUMNS} FROM responses WHERE {condition}", params) as cursor:
                rows = list(await cursor.fetchall())
            await conn.execute(f"DELETE FROM responses WHERE {condition}", params)
            if change is not None:
                for row in rows:
                    await write_event(conn, tenant, row["id"], change, row, None, now)
        return [row["id"] for row in rows]

    async def count_by(self, tenant: str, column: Literal["status", "source"]) -> dict[str, int]:
        """Entries per `status` or per `source`, every value present (zero when none)."""
        values = {"status": Status, "source": Source}[column]
        rows = await self._db.fetch_all(
            f"SELECT {column} AS value, COUNT(*) AS n FROM responses WHERE tenant = ? AND {VISIBLE} "
            f"GROUP BY {column}",
            (tenant,),
        )
        counts = {value.value: 0 for value in values}
        counts.update({row["value"]: row["n"] for row in rows})
        return counts

    async def statuses_by_key(self, tenant: str, keys: Sequence[str]) -> dict[str, set[Status]]:
        """The statuses of the entries stored under each of these normalized-question keys."""
        found: dict[str, set[Status]] = {}
        for chunk in in_batches(keys):
            rows = await self._db.fetch_all(
                f"SELECT DISTINCT key_hash, status FROM responses WHERE tenant = ? AND {VISIBLE} "
                f"AND key_hash IN ({placeholders(chunk)})",
                (tenant, *chunk),
            )
            for row in rows:
                found.setdefault(row["key_hash"], set()).add(Status(row["status"]))
        return found

    async def ids_to_reembed(self, model_id: str, everything: bool) -> list[int]:
        sql = f"SELECT id FROM responses WHERE {VISIBLE}"
        params: tuple[str, ...] = ()
        if not everything:
            sql += " AND (embedding_model IS NULL OR embedding_model != ?)"
            params = (model_id,)
        return [row["id"] for row in await self._db.fetch_all(sql + " ORDER BY id", params)]

    async def questions(self, ids: Sequence[int]) -> list[tuple[int, str]]:
        rows = await self._db.fetch_all(
            f"SELECT id, question FROM responses WHERE {VISIBLE} AND id IN ({placeholders(ids)}) ORDER BY id",
            tuple(ids),
        )
        return [(row["id"], row["question"]) for row in rows]

    async def set_vectors(self, vectors: Sequence[tuple[int, Vectors]], model_id: str) -> None:
        """Write re-embedded vectors without touching updated_at (re-embedding is not an edit)."""
        async with self._db.transaction() as conn:
            await conn.executemany(
                "UPDATE responses SET embedding = ?, embedding_model = ? WHERE id = ?",
                [(vector_to_blob(vector), model_id, entry_id) for entry_id, vector in vectors],
            )
