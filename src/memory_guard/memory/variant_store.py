"""All SQL of question variants (the `response_variants` table), on SQLite.

A variant is seen only with its entry: every read joins its entry's row, visible (not an
unfinished import's) and of the same tenant, so an entry's rules bind its variants too.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import aiosqlite

from memory_guard.core.clock import from_text, to_text
from memory_guard.core.scope import Scope
from memory_guard.db.database import Database, Row, in_batches, placeholders
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Change
from memory_guard.memory.entry import Entry
from memory_guard.memory.entry_rows import (
    COLUMNS,
    SECONDS,
    blob_to_vector,
    row_to_entry,
    seconds_of,
    vector_to_blob,
)
from memory_guard.memory.variant import (
    Holder,
    NewVariant,
    Variant,
    VariantIndexRow,
    VariantOrigin,
    VariantStatus,
)
from memory_guard.verify.llm_judge import question_key

_VARIANT = (
    "v.id AS v_id, v.response_id AS v_response_id, v.question AS v_question, v.key_hash AS v_key_hash, "
    "v.status AS v_status, v.origin AS v_origin, v.confirmations AS v_confirmations, "
    "v.created_at AS v_created_at, v.created_by AS v_created_by, v.updated_at AS v_updated_at, "
    "v.embedding_model AS v_embedding_model"
)
_NO_VARIANT = ", ".join(f"NULL AS {name.split(' AS ')[1]}" for name in _VARIANT.split(", "))
_ENTRY = ", ".join(f"r.{name} AS {name}" for name in COLUMNS.split(", "))
# The variant's entry: visible, and of the variant's tenant.
_JOIN = "response_variants v JOIN responses r ON r.id = v.response_id AND r.tenant = v.tenant"
_LIVE_ENTRY = "r.pending_import IS NULL"
# ... and not obsolete: an entry that holds its wordings against another's.
_LIVE = f"{_LIVE_ENTRY} AND r.status != 'obsolete'"


def _variant(row: Row) -> Variant:
    return Variant(
        id=row["v_id"],
        entry_id=row["v_response_id"],
        question=row["v_question"],
        key_hash=row["v_key_hash"],
        status=VariantStatus(row["v_status"]),
        origin=VariantOrigin(row["v_origin"]),
        confirmations=row["v_confirmations"],
        created_at=from_text(row["v_created_at"]),
        created_by=row["v_created_by"],
        updated_at=from_text(row["v_updated_at"]),
        embedding_model=row["v_embedding_model"],
    )


async def _fetch(conn: aiosqlite.Connection, tenant: str, entry_id: int, variant_id: int) -> Row | None:
    """A variant read inside a write transaction (its entry visible)."""
    async with conn.execute(
        f"SELECT {_VARIANT} FROM {_JOIN} WHERE v.id = ? AND v.response_id = ? AND v.tenant = ? "
        f"AND {_LIVE_ENTRY}",
        (variant_id, entry_id, tenant),
    ) as cursor:
        row: Row | None = await cursor.fetchone()
        return row


async def _audit(
    conn: aiosqlite.Connection,
    tenant: str,
    entry_id: int,
    change: Change,
    before: Variant | None,
    after: Variant | None,
    now: datetime,
    pending: str | None = None,
) -> None:
    """An audit event of the entry, whose `before`/`after` are the variant's snapshots."""
    await conn.execute(
        "INSERT INTO audit_events (tenant, entry_id, at, actor, action, before, after, proposal_id, "
        "pending_import) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            tenant,
            entry_id,
            to_text(now),
            change.actor,
            change.action.value,
            json.dumps(before.snapshot(), ensure_ascii=False) if before is not None else None,
            json.dumps(after.snapshot(), ensure_ascii=False) if after is not None else None,
            change.proposal_id,
            pending,
        ),
    )


async def insert_variants(
    conn: aiosqlite.Connection,
    tenant: str,
    entry_id: int,
    news: Sequence[NewVariant],
    now: datetime,
    change: Change | None,
    pending: str | None = None,
) -> list[Variant]:
    """Insert an entry's variants inside the caller's transaction, each with its audit event
    (marked `pending` as its entry's are, for an import)."""
    stamp = to_text(now)
    stored: list[Variant] = []
    for new in news:
        cursor = await conn.execute(
            "INSERT INTO response_variants (response_id, tenant, question, key_hash, embedding, "
            "embedding_model, status, origin, confirmations, created_at, created_by, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry_id,
                tenant,
                new.question,
                new.key_hash,
                vector_to_blob(new.vector) if new.vector is not None else None,
                new.embedding_model if new.vector is not None else None,
                new.status.value,
                new.origin.value,
                new.confirmations,
                stamp,
                new.created_by,
                stamp,
            ),
        )
        assert cursor.lastrowid is not None
        variant = Variant(
            id=cursor.lastrowid,
            entry_id=entry_id,
            question=new.question,
            key_hash=new.key_hash,
            status=new.status,
            origin=new.origin,
            confirmations=new.confirmations,
            created_at=from_text(stamp),
            created_by=new.created_by,
            updated_at=from_text(stamp),
            embedding_model=new.embedding_model if new.vector is not None else None,
        )
        if change is not None:
            await _audit(conn, tenant, entry_id, change, None, variant, now, pending)
        stored.append(variant)
    return stored


class SqliteVariantStore:
    """The embedded `VariantStore`: the same SQLite file and writer as the entries."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def find_wordings(self, tenant: str, key: str) -> list[tuple[Entry, Variant | None]]:
        # One round trip on every lookup's path: the entries' own keys and their variants' at once.
        rows = await self._db.fetch_all(
            f"SELECT {_ENTRY}, {_NO_VARIANT}, 0 AS through FROM responses r "
            f"WHERE r.key_hash = ? AND r.tenant = ? AND {_LIVE_ENTRY} "
            f"UNION ALL SELECT {_ENTRY}, {_VARIANT}, 1 AS through FROM {_JOIN} "
            f"WHERE v.key_hash = ? AND v.tenant = ? AND {_LIVE_ENTRY} "
            "ORDER BY through, created_at DESC, id DESC",
            (key, tenant, key, tenant),
        )
        return [(row_to_entry(row), _variant(row) if row["through"] else None) for row in rows]

    async def holders(self, tenant: str, keys: Sequence[str]) -> dict[str, list[Holder]]:
        found: dict[str, list[Holder]] = {}
        for chunk in in_batches(keys):
            marks = placeholders(chunk)
            rows = await self._db.fetch_all(
                "SELECT r.key_hash AS key, r.id AS entry_id, NULL AS variant_id FROM responses r "
                f"WHERE r.tenant = ? AND {_LIVE} AND r.key_hash IN ({marks}) "
                f"UNION ALL SELECT v.key_hash, v.response_id, v.id FROM {_JOIN} "
                f"WHERE v.tenant = ? AND {_LIVE} AND v.key_hash IN ({marks})",
                (tenant, *chunk, tenant, *chunk),
            )
            for row in rows:
                found.setdefault(row["key"], []).append(Holder(row["entry_id"], row["variant_id"]))
        return found

    async def of_entry(self, tenant: str, entry_id: int) -> list[Variant]:
        return (await self.of_entries(tenant, [entry_id])).get(entry_id, [])

    async def of_entries(self, tenant: str, entry_ids: Sequence[int]) -> dict[int, list[Variant]]:
        found: dict[int, list[Variant]] = {}
        for chunk in in_batches(entry_ids):
            rows = await self._db.fetch_all(
                f"SELECT {_VARIANT} FROM {_JOIN} WHERE v.tenant = ? AND {_LIVE_ENTRY} "
                f"AND v.response_id IN ({placeholders(chunk)}) ORDER BY v.id",
                (tenant, *chunk),
            )
            for row in rows:
                found.setdefault(row["v_response_id"], []).append(_variant(row))
        return found

    async def get_many(self, tenant: str, ids: Sequence[int]) -> dict[int, Variant]:
        if not ids:
            return {}
        rows = await self._db.fetch_all(
            f"SELECT {_VARIANT} FROM {_JOIN} WHERE v.tenant = ? AND {_LIVE_ENTRY} "
            f"AND v.id IN ({placeholders(ids)})",
            (tenant, *ids),
        )
        return {row["v_id"]: _variant(row) for row in rows}

    async def add(
        self, tenant: str, entry_id: int, new: NewVariant, now: datetime, change: Change
    ) -> Variant | None:
        async with self._db.transaction() as conn:
            async with conn.execute(
                f"SELECT id FROM responses r WHERE id = ? AND tenant = ? AND {_LIVE_ENTRY}",
                (entry_id, tenant),
            ) as cursor:
                if await cursor.fetchone() is None:
                    return None
            return (await insert_variants(conn, tenant, entry_id, [new], now, change))[0]

    async def update(
        self, tenant: str, entry_id: int, variant_id: int, now: datetime, change: Change, **fields: Any
    ) -> Variant | None:
        assignments = ", ".join(f"{name} = ?" for name in fields)
        values = [getattr(value, "value", value) for value in fields.values()]
        async with self._db.transaction() as conn:
            before = await _fetch(conn, tenant, entry_id, variant_id)
            if before is None:
                return None
            await conn.execute(
                f"UPDATE response_variants SET {assignments}, updated_at = ? WHERE id = ?",
                (*values, to_text(now), variant_id),
            )
            after = await _fetch(conn, tenant, entry_id, variant_id)
            assert after is not None
            await _audit(conn, tenant, entry_id, change, _variant(before), _variant(after), now)
        return _variant(after)

    async def confirm(
        self, tenant: str, entry_id: int, variant_id: int, up_to: int, now: datetime, change: Change
    ) -> Variant | None:
        async with self._db.transaction() as conn:
            before = await _fetch(conn, tenant, entry_id, variant_id)
            if before is None:
                return None
            if before["v_status"] != VariantStatus.LEARNED.value or before["v_confirmations"] >= up_to:
                return _variant(before)
            # Counted in SQL: two confirmations at once both count, neither overwrites the other.
            await conn.execute(
                "UPDATE response_variants SET confirmations = confirmations + 1, updated_at = ? WHERE id = ?",
                (to_text(now), variant_id),
            )
            after = await _fetch(conn, tenant, entry_id, variant_id)
            assert after is not None
            await _audit(conn, tenant, entry_id, change, _variant(before), _variant(after), now)
        return _variant(after)

    async def delete(
        self, tenant: str, entry_id: int, variant_id: int, now: datetime, change: Change
    ) -> Variant | None:
        async with self._db.transaction() as conn:
            row = await _fetch(conn, tenant, entry_id, variant_id)
            if row is None:
                return None
            await conn.execute("DELETE FROM response_variants WHERE id = ?", (variant_id,))
            removed = _variant(row)
            # A judge's cached yes for this wording would confirm it again the next time it is
            # learned, or serve the entry for it by vector: whoever removed it said otherwise.
            await conn.execute(
                "DELETE FROM judgements WHERE tenant = ? AND entry_id = ? AND question_key = ?",
                (tenant, entry_id, question_key(removed.question)),
            )
            await _audit(conn, tenant, entry_id, change, removed, None, now)
        return removed

    async def vectors(self, entry_ids: Sequence[int], model_id: str) -> dict[int, list[tuple[int, Vectors]]]:
        found: dict[int, list[tuple[int, Vectors]]] = {}
        for chunk in in_batches(entry_ids):
            rows = await self._db.fetch_all(
                "SELECT id, response_id, embedding FROM response_variants WHERE embedding_model = ? "
                f"AND embedding IS NOT NULL AND response_id IN ({placeholders(chunk)}) ORDER BY id",
                (model_id, *chunk),
            )
            for row in rows:
                found.setdefault(row["response_id"], []).append((row["id"], blob_to_vector(row["embedding"])))
        return found

    async def index_rows(self, model_id: str, max_age: timedelta) -> AsyncIterator[list[VariantIndexRow]]:
        """As `SqliteMemoryStore.index_rows`, the dates being the entry's."""
        scopes: dict[tuple[str, str, str, str], Scope] = {}
        async for rows in self._db.batches(
            "SELECT v.response_id, v.id, r.tenant, r.agent, r.project, r.phase, v.embedding, "
            f"{SECONDS.format('r.created_at')} AS created, "
            f"MIN({SECONDS.format('r.updated_at')} + ?, "
            f"COALESCE({SECONDS.format('r.expires_at')}, 9e999)) AS expires, "
            "r.created_at AS created_at, r.updated_at AS updated_at, r.expires_at AS expires_at "
            f"FROM {_JOIN} WHERE v.embedding_model = ? AND v.embedding IS NOT NULL "
            f"AND r.status != 'obsolete' AND {_LIVE_ENTRY}",
            (max_age.total_seconds(), model_id),
            batch=5000,
        ):
            batch: list[VariantIndexRow] = []
            for row in rows:
                key = (row[2], row[3], row[4], row[5])
                scope = scopes.get(key) or scopes.setdefault(key, Scope(*key))
                created, expires = row[7], row[8]
                if created is None or expires is None:  # a date SQLite cannot read (legacy form)
                    created, expires = seconds_of(row, max_age)
                batch.append(VariantIndexRow(row[0], row[1], scope, row[6], created, expires))
            yield batch

    async def entries_to_reembed(self, model_id: str) -> list[int]:
        rows = await self._db.fetch_all(
            f"SELECT DISTINCT v.response_id FROM {_JOIN} WHERE {_LIVE_ENTRY} "
            "AND (v.embedding_model IS NULL OR v.embedding_model != ?)",
            (model_id,),
        )
        return [row[0] for row in rows]

    async def questions(self, entry_ids: Sequence[int]) -> list[tuple[int, str]]:
        if not entry_ids:
            return []
        rows = await self._db.fetch_all(
            f"SELECT id, question FROM response_variants WHERE response_id IN ({placeholders(entry_ids)}) "
            "ORDER BY id",
            tuple(entry_ids),
        )
        return [(row["id"], row["question"]) for row in rows]

    async def set_vectors(self, vectors: Sequence[tuple[int, Vectors]], model_id: str) -> None:
        """Re-embedded wordings; not an edit (`updated_at` stays)."""
        async with self._db.transaction() as conn:
            await conn.executemany(
                "UPDATE response_variants SET embedding = ?, embedding_model = ? WHERE id = ?",
                [(vector_to_blob(vector), model_id, variant_id) for variant_id, vector in vectors],
            )
