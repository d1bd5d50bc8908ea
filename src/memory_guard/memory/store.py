"""All SQL of the response memory (the seed's `responses` table), on SQLite."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any, Literal

import aiosqlite
import numpy as np

from memory_guard.clock import from_text, to_text
from memory_guard.db.database import Database, Row, placeholders
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Change
from memory_guard.memory.audit_store import write_event
from memory_guard.memory.entry import Entry, Scope, Source, Status
from memory_guard.memory.lookups import LookupRecord, LookupTotals
from memory_guard.memory.storage import EntryFilter, IndexRow, NewEntry

_COLUMNS = (
    "id, key_hash, question, answer, metadata, created_at, usage_count, tenant, agent, project, phase, "
    "status, source, tags, embedding_model, updated_at, last_used_at, expires_at"
)


def _column_value(name: str, value: Any) -> Any:
    if name in {"tags", "metadata"}:
        return json.dumps(value)
    if isinstance(value, datetime):
        return to_text(value)
    return getattr(value, "value", value)


def vector_to_blob(vector: Vectors) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def blob_to_vector(blob: bytes) -> Vectors:
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def _row_to_entry(row: Row) -> Entry:
    return Entry(
        id=row["id"],
        scope=Scope(row["tenant"], row["agent"], row["project"], row["phase"]),
        question=row["question"],
        answer=row["answer"],
        status=Status(row["status"]),
        source=Source(row["source"]),
        key_hash=row["key_hash"],
        created_at=from_text(row["created_at"]),
        updated_at=from_text(row["updated_at"]),
        usage_count=row["usage_count"],
        tags=json.loads(row["tags"]),
        last_used_at=from_text(row["last_used_at"]) if row["last_used_at"] else None,
        expires_at=from_text(row["expires_at"]) if row["expires_at"] else None,
        embedding_model=row["embedding_model"],
        metadata=json.loads(row["metadata"]),
    )


def _filter_sql(tenant: str, where: EntryFilter) -> tuple[list[str], list[Any]]:
    clauses = ["tenant = ?"]
    params: list[Any] = [tenant]
    for column, value in (
        ("status", where.status.value if where.status else None),
        ("source", where.source.value if where.source else None),
        ("agent", where.agent),
        ("project", where.project),
        ("phase", where.phase),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if where.tag is not None:
        clauses.append("EXISTS (SELECT 1 FROM json_each(responses.tags) WHERE json_each.value = ?)")
        params.append(where.tag)
    if where.created_from is not None:
        clauses.append("created_at >= ?")
        params.append(to_text(where.created_from))
    if where.created_before is not None:
        clauses.append("created_at < ?")
        params.append(to_text(where.created_before))
    return clauses, params


async def _fetch_row(conn: aiosqlite.Connection, tenant: str, entry_id: int) -> Row | None:
    """An entry's row read inside a write transaction, to see what the transaction sees."""
    async with conn.execute(
        f"SELECT {_COLUMNS} FROM responses WHERE id = ? AND tenant = ?", (entry_id, tenant)
    ) as cursor:
        row: Row | None = await cursor.fetchone()
        return row


def _insert_params(new: NewEntry, stamp: str) -> tuple[Any, ...]:
    return (
        new.id,
        new.key_hash,
        new.question,
        new.answer,
        json.dumps(new.metadata or {}),
        vector_to_blob(new.vector) if new.vector is not None else None,
        stamp,
        new.scope.tenant,
        new.scope.agent,
        new.scope.project,
        new.scope.phase,
        new.status.value,
        new.source.value,
        json.dumps(list(new.tags)),
        new.embedding_model if new.vector is not None else None,
        stamp,
        to_text(new.expires_at) if new.expires_at else None,
    )


_INSERT = (
    "INSERT INTO responses (id, key_hash, question, answer, metadata, embedding, created_at, usage_count, "
    "tenant, agent, project, phase, status, source, tags, embedding_model, updated_at, expires_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class SqliteMemoryStore:
    """The embedded `MemoryStore`: one SQLite file, WAL, one writer."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def insert(self, new: NewEntry, now: datetime, change: Change | None = None) -> Entry:
        return (await self.insert_many([new], now, change))[0]

    async def insert_many(
        self, news: Sequence[NewEntry], now: datetime, change: Change | None = None
    ) -> list[Entry]:
        """Insert every entry or none (one transaction), each with its audit event."""
        stamp = to_text(now)
        rows: list[Row] = []
        async with self._db.transaction() as conn:
            for new in news:
                cursor = await conn.execute(_INSERT, _insert_params(new, stamp))
                assert cursor.lastrowid is not None
                row = await _fetch_row(conn, new.scope.tenant, cursor.lastrowid)
                assert row is not None
                if change is not None:
                    await write_event(conn, new.scope.tenant, row["id"], change, None, row, now)
                rows.append(row)
        return [_row_to_entry(row) for row in rows]

    async def get(self, tenant: str, entry_id: int) -> Entry | None:
        row = await self._db.fetch_one(
            f"SELECT {_COLUMNS} FROM responses WHERE id = ? AND tenant = ?", (entry_id, tenant)
        )
        return _row_to_entry(row) if row else None

    async def get_many(self, tenant: str, ids: Sequence[int]) -> dict[int, Entry]:
        if not ids:
            return {}
        rows = await self._db.fetch_all(
            f"SELECT {_COLUMNS} FROM responses WHERE tenant = ? AND id IN ({placeholders(ids)})",
            (tenant, *ids),
        )
        return {row["id"]: _row_to_entry(row) for row in rows}

    async def find_by_key(self, tenant: str, key: str) -> list[Entry]:
        """Entries with this exact normalized question in this scope, newest first."""
        rows = await self._db.fetch_all(
            f"SELECT {_COLUMNS} FROM responses WHERE key_hash = ? AND tenant = ? "
            "ORDER BY created_at DESC, id DESC",
            (key, tenant),
        )
        return [_row_to_entry(row) for row in rows]

    async def list_entries(
        self, tenant: str, where: EntryFilter, limit: int, before_id: int | None
    ) -> list[Entry]:
        """Newest first; `before_id` is the cursor (ids only grow)."""
        clauses, params = _filter_sql(tenant, where)
        if before_id is not None:
            clauses.append("id < ?")
            params.append(before_id)
        rows = await self._db.fetch_all(
            f"SELECT {_COLUMNS} FROM responses WHERE {' AND '.join(clauses)} ORDER BY id DESC LIMIT ?",
            (*params, limit),
        )
        return [_row_to_entry(row) for row in rows]

    async def index_rows(self, model_id: str) -> AsyncIterator[IndexRow]:
        """Every servable-status vector made by `model_id`, for loading the index."""
        async for row in self._db.iterate(
            "SELECT id, tenant, agent, project, phase, embedding, created_at, updated_at, expires_at "
            "FROM responses WHERE embedding_model = ? AND status != 'obsolete' AND embedding IS NOT NULL",
            (model_id,),
        ):
            yield IndexRow(
                id=row["id"],
                scope=Scope(row["tenant"], row["agent"], row["project"], row["phase"]),
                vector=blob_to_vector(row["embedding"]),
                created_at=from_text(row["created_at"]),
                updated_at=from_text(row["updated_at"]),
                expires_at=from_text(row["expires_at"]) if row["expires_at"] else None,
            )

    async def search_vectors(
        self, tenant: str, where: EntryFilter, model_id: str
    ) -> list[tuple[int, Vectors]]:
        clauses, params = _filter_sql(tenant, where)
        rows = await self._db.fetch_all(
            f"SELECT id, embedding FROM responses WHERE {' AND '.join(clauses)} "
            "AND embedding_model = ? AND embedding IS NOT NULL",
            (*params, model_id),
        )
        return [(row["id"], blob_to_vector(row["embedding"])) for row in rows]

    async def vector(self, entry_id: int) -> tuple[Vectors, str] | None:
        row = await self._db.fetch_one(
            "SELECT embedding, embedding_model FROM responses WHERE id = ?", (entry_id,)
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
            params.append(_column_value(name, value))
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
        return _row_to_entry(after)

    async def record_lookup(
        self, record: LookupRecord, used_ids: Sequence[int], usage: int, now: datetime
    ) -> int:
        """Log a decision and count the usage it implies, in one transaction; the log row's id."""
        stamp = to_text(now)
        scope = record.scope
        async with self._db.transaction() as conn:
            if used_ids:
                await conn.execute(
                    "UPDATE responses SET usage_count = usage_count + ?, last_used_at = ? "
                    f"WHERE id IN ({placeholders(used_ids)})",
                    (usage, stamp, *used_ids),
                )
            cursor = await conn.execute(
                "INSERT INTO lookups (tenant, agent, project, phase, decision, entry_id, score, "
                "tokens_saved, created_at, question, verdict, reason, probability, verified_by) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    scope.tenant,
                    scope.agent,
                    scope.project,
                    scope.phase,
                    record.decision,
                    record.entry_id,
                    record.score,
                    record.tokens_saved,
                    stamp,
                    record.question,
                    record.verdict,
                    record.reason,
                    record.probability,
                    record.verified_by,
                ),
            )
            lookup_id = cursor.lastrowid
        assert lookup_id is not None
        return lookup_id

    async def lookup_totals(self, tenant: str) -> LookupTotals:
        rows = await self._db.fetch_all(
            "SELECT decision, COUNT(*) AS n, COALESCE(SUM(tokens_saved), 0) AS saved FROM lookups "
            "WHERE tenant = ? GROUP BY decision",
            (tenant,),
        )
        counts = {"direct": 0, "assisted": 0, "miss": 0}
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
        condition = "tenant = ? AND (updated_at < ? OR (expires_at IS NOT NULL AND expires_at <= ?))"
        params = (tenant, to_text(aged_before), to_text(now))
        async with self._db.transaction() as conn:
            async with conn.execute(f"SELECT {_COLUMNS} FROM responses WHERE {condition}", params) as cursor:
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
            f"SELECT {column} AS value, COUNT(*) AS n FROM responses WHERE tenant = ? GROUP BY {column}",
            (tenant,),
        )
        counts = {value.value: 0 for value in values}
        counts.update({row["value"]: row["n"] for row in rows})
        return counts

    async def statuses_by_key(self, tenant: str, keys: Sequence[str]) -> dict[str, set[Status]]:
        """The statuses of the entries stored under each of these normalized-question keys."""
        found: dict[str, set[Status]] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            rows = await self._db.fetch_all(
                "SELECT DISTINCT key_hash, status FROM responses WHERE tenant = ? "
                f"AND key_hash IN ({placeholders(chunk)})",
                (tenant, *chunk),
            )
            for row in rows:
                found.setdefault(row["key_hash"], set()).add(Status(row["status"]))
        return found

    async def ids_to_reembed(self, model_id: str, everything: bool) -> list[int]:
        sql = "SELECT id FROM responses"
        params: tuple[str, ...] = ()
        if not everything:
            sql += " WHERE embedding_model IS NULL OR embedding_model != ?"
            params = (model_id,)
        return [row["id"] for row in await self._db.fetch_all(sql + " ORDER BY id", params)]

    async def questions(self, ids: Sequence[int]) -> list[tuple[int, str]]:
        rows = await self._db.fetch_all(
            f"SELECT id, question FROM responses WHERE id IN ({placeholders(ids)}) ORDER BY id", tuple(ids)
        )
        return [(row["id"], row["question"]) for row in rows]

    async def set_vectors(self, vectors: Sequence[tuple[int, Vectors]], model_id: str) -> None:
        """Write re-embedded vectors without touching updated_at (re-embedding is not an edit)."""
        async with self._db.transaction() as conn:
            await conn.executemany(
                "UPDATE responses SET embedding = ?, embedding_model = ? WHERE id = ?",
                [(vector_to_blob(vector), model_id, entry_id) for entry_id, vector in vectors],
            )
