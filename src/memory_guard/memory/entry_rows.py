"""How an entry maps to a row of the `responses` table and back: columns, values, filters.

The SQL that reads and writes those rows is in `store.py`; this is the mapping both sides share.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from memory_guard.core.clock import from_text, to_text
from memory_guard.core.scope import Scope
from memory_guard.db.database import Row
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.entry import Entry, Source, Status
from memory_guard.memory.store import EntryFilter, NewEntry

# Rows of an import still being written are nobody's to read, serve, edit or export.
VISIBLE = "pending_import IS NULL"

COLUMNS = (
    "id, key_hash, question, answer, metadata, created_at, usage_count, tenant, agent, project, phase, "
    "status, source, tags, embedding_model, updated_at, last_used_at, expires_at"
)


def column_value(name: str, value: Any) -> Any:
    if name in {"tags", "metadata"}:
        return json.dumps(value)
    if isinstance(value, datetime):
        return to_text(value)
    return getattr(value, "value", value)


def vector_to_blob(vector: Vectors) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def blob_to_vector(blob: bytes) -> Vectors:
    return np.frombuffer(blob, dtype="<f4").astype(np.float32)


def row_to_entry(row: Row, prefix: str = "") -> Entry:
    """The entry of a row holding every column of `COLUMNS`, each named with `prefix` before it."""

    def column(name: str) -> Any:
        return row[prefix + name]

    last_used, expires = column("last_used_at"), column("expires_at")
    return Entry(
        id=column("id"),
        scope=Scope(column("tenant"), column("agent"), column("project"), column("phase")),
        question=column("question"),
        answer=column("answer"),
        status=Status(column("status")),
        source=Source(column("source")),
        key_hash=column("key_hash"),
        created_at=from_text(column("created_at")),
        updated_at=from_text(column("updated_at")),
        usage_count=column("usage_count"),
        tags=json.loads(column("tags")),
        last_used_at=from_text(last_used) if last_used else None,
        expires_at=from_text(expires) if expires else None,
        embedding_model=column("embedding_model"),
        metadata=json.loads(column("metadata")),
    )


def filter_sql(tenant: str, where: EntryFilter) -> tuple[list[str], list[Any]]:
    clauses = ["tenant = ?", VISIBLE]
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


def insert_params(new: NewEntry, stamp: str, pending: str | None) -> tuple[Any, ...]:
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
        new.usage_count,
        to_text(new.last_used_at) if new.last_used_at else None,
        pending,
    )


INSERT = (
    "INSERT INTO responses (id, key_hash, question, answer, metadata, embedding, created_at, "
    "tenant, agent, project, phase, status, source, tags, embedding_model, updated_at, expires_at, "
    "usage_count, last_used_at, pending_import) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


# A stored date as POSIX seconds, in SQL (NULL for a date SQLite cannot read).
SECONDS = "((julianday({}) - 2440587.5) * 86400.0)"


def seconds_of(row: Row, max_age: timedelta) -> tuple[float, float]:
    updated = from_text(row["updated_at"]).timestamp() + max_age.total_seconds()
    expires = from_text(row["expires_at"]).timestamp() if row["expires_at"] else math.inf
    return from_text(row["created_at"]).timestamp(), min(updated, expires)
