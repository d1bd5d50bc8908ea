"""The seam of the response memory's storage: what the guard and the services need of it.

`SqliteMemoryStore` is the embedded implementation; a server database implements the same.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from memory_guard.embeddings.base import Vectors
from memory_guard.memory.entry import Entry, Scope, Source, Status
from memory_guard.memory.lookups import LookupRecord, LookupTotals


@dataclass(frozen=True, slots=True)
class NewEntry:
    scope: Scope
    question: str
    answer: str
    key_hash: str
    status: Status
    source: Source
    vector: Vectors | None
    embedding_model: str | None
    tags: Sequence[str] = ()
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class IndexRow:
    """What the similarity index needs of an entry, read without its texts."""

    id: int
    scope: Scope
    vector: Vectors
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None


@dataclass(frozen=True, slots=True)
class EntryFilter:
    status: Status | None = None
    agent: str | None = None
    project: str | None = None
    phase: str | None = None


class MemoryStore(Protocol):
    """Every method is scoped by tenant where it reads or writes entries of one."""

    async def insert(self, new: NewEntry, now: datetime) -> Entry: ...

    async def get(self, tenant: str, entry_id: int) -> Entry | None: ...

    async def get_many(self, tenant: str, ids: Sequence[int]) -> dict[int, Entry]: ...

    async def find_by_key(self, tenant: str, key: str) -> list[Entry]:
        """Entries with this exact normalized question in its scope, newest first."""
        ...

    async def list_entries(
        self, tenant: str, where: EntryFilter, limit: int, before_id: int | None
    ) -> list[Entry]: ...

    def index_rows(self, model_id: str) -> AsyncIterator[IndexRow]:
        """Every non-obsolete vector made by `model_id`, for loading the index."""
        ...

    async def search_vectors(
        self, tenant: str, where: EntryFilter, model_id: str
    ) -> list[tuple[int, Vectors]]: ...

    async def vector(self, entry_id: int) -> tuple[Vectors, str] | None: ...

    async def update(self, tenant: str, entry_id: int, now: datetime, **fields: Any) -> Entry | None: ...

    async def record_lookup(
        self, record: LookupRecord, used_ids: Sequence[int], usage: int, now: datetime
    ) -> int:
        """Log a decision and count the usage it implies, atomically; the log row's id."""
        ...

    async def lookup_totals(self, tenant: str) -> LookupTotals: ...

    async def delete(self, tenant: str, entry_id: int) -> bool: ...

    async def delete_expired(self, tenant: str, aged_before: datetime, now: datetime) -> list[int]: ...

    async def count_by_status(self, tenant: str) -> dict[str, int]: ...

    async def ids_to_reembed(self, model_id: str, everything: bool) -> list[int]: ...

    async def questions(self, ids: Sequence[int]) -> list[tuple[int, str]]: ...

    async def set_vectors(self, vectors: Sequence[tuple[int, Vectors]], model_id: str) -> None: ...
