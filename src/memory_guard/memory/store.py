"""The seam of the response memory's storage: what the guard and the services need of it.

`SqliteMemoryStore` is the embedded implementation; a server database implements the same.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from memory_guard.core.scope import Scope
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Action, AuditEvent, Change
from memory_guard.memory.entry import Entry, Source, Status
from memory_guard.memory.lookups import EntryUsage, LoggedLookup, LookupTotals
from memory_guard.memory.variant import NewVariant


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
    expires_at: datetime | None = None
    id: int | None = None  # given only to bring a deleted entry back under its own id
    # Given only to a restored entry: how much it was used is not content, so a restore keeps it.
    usage_count: int = 0
    last_used_at: datetime | None = None
    variants: Sequence[NewVariant] = ()  # stored with it, in its transaction (an import's)


@dataclass(frozen=True, slots=True)
class IndexRow:
    """What the similarity index needs of an entry, read without its texts and with its dates as
    numbers (parsing 100,000 dates at start-up was most of the start-up time)."""

    id: int
    scope: Scope
    embedding: bytes  # float32, little-endian
    created: float  # POSIX seconds
    expires: float  # POSIX seconds: its explicit expiry or its age limit, whichever comes first


@dataclass(frozen=True, slots=True)
class EntryFilter:
    """What staff narrow a list to; `None` leaves a field free. Dates bound `created_at`."""

    status: Status | None = None
    agent: str | None = None
    project: str | None = None
    phase: str | None = None
    source: Source | None = None
    tag: str | None = None
    created_from: datetime | None = None
    created_before: datetime | None = None


class MemoryStore(Protocol):
    """What staff and clients reach is scoped by tenant: every method taking a `tenant` reads or
    writes that tenant's entries only. The others serve the service itself, across tenants: loading
    the index (`index_rows`), re-reading an entry's vector by its id (`vector`), the bookkeeping of
    lookups, and re-embedding (`ids_to_reembed`, `questions`, `set_vectors`); their callers never
    take an id from a request."""

    async def insert(self, new: NewEntry, now: datetime, change: Change | None = None) -> Entry: ...

    async def insert_many(
        self,
        news: Sequence[NewEntry],
        now: datetime,
        change: Change | None = None,
        pending: str | None = None,
    ) -> list[Entry]:
        """All or nothing; with `pending`, unseen until that import is published."""
        ...

    async def get(self, tenant: str, entry_id: int) -> Entry | None: ...

    async def get_many(self, tenant: str, ids: Sequence[int]) -> dict[int, Entry]: ...

    async def find_by_key(self, tenant: str, key: str) -> list[Entry]:
        """Entries with this exact normalized question in its scope, newest first."""
        ...

    async def list_entries(
        self, tenant: str, where: EntryFilter, limit: int, before_id: int | None
    ) -> list[Entry]: ...

    def index_rows(self, model_id: str, max_age: timedelta) -> AsyncIterator[Sequence[IndexRow]]:
        """Every non-obsolete vector made by `model_id`, batch by batch, for loading the index."""
        ...

    async def search_vectors(
        self, tenant: str, where: EntryFilter, model_id: str
    ) -> list[tuple[int, Vectors]]: ...

    async def vector(self, entry_id: int) -> tuple[Vectors, str] | None: ...

    async def update(
        self, tenant: str, entry_id: int, now: datetime, change: Change | None = None, **fields: Any
    ) -> Entry | None:
        """`change`, when given, is recorded in the audit trail with the change, atomically."""
        ...

    def reserve_lookup_id(self) -> int:
        """The id the next logged decision will have (known before it is written)."""
        ...

    async def record_lookups(self, lookups: Sequence[LoggedLookup]) -> None:
        """Log decisions and count the usage they imply, atomically."""
        ...

    async def lookup_totals(self, tenant: str) -> LookupTotals: ...

    async def delete(
        self, tenant: str, entry_id: int, now: datetime, change: Change | None = None
    ) -> bool: ...

    async def delete_expired(
        self, tenant: str, aged_before: datetime, now: datetime, change: Change | None = None
    ) -> list[int]: ...

    async def count_by(self, tenant: str, column: Literal["status", "source"]) -> dict[str, int]: ...

    async def statuses_by_key(self, tenant: str, keys: Sequence[str]) -> dict[str, set[Status]]: ...

    async def ids_to_reembed(self, model_id: str, everything: bool) -> list[int]: ...

    async def questions(self, ids: Sequence[int]) -> list[tuple[int, str]]: ...

    async def set_vectors(self, vectors: Sequence[tuple[int, Vectors]], model_id: str) -> None: ...


class AuditLog(Protocol):
    async def event(self, tenant: str, event_id: int) -> AuditEvent | None: ...

    async def events(
        self,
        tenant: str,
        *,
        entry_id: int | None = None,
        actions: Sequence[Action] = (),
        limit: int = 50,
        before_id: int | None = None,
    ) -> list[AuditEvent]:
        """Newest first; `before_id` is the cursor."""
        ...


class LookupLog(Protocol):
    async def usage(self, tenant: str, entry_id: int, recent: int = 20) -> EntryUsage: ...

    async def timeline(self, tenant: str, since: datetime) -> dict[str, dict[str, int]]:
        """Decisions per UTC day (`YYYY-MM-DD`) from `since` on."""
        ...
