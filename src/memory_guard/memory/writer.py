"""The one way entries are written: to the store, with the similarity index kept in step.

The services that change entries one by one or by import (staff edits, learning, restores,
imports, client feedback and accepted proposals) write through an `EntryWriter`, so none of them
holds the store or the index. Two bulk changes stay with their owners: the guard prunes expired
entries (and drops them from its index), and the `reindex` command re-embeds stored questions.
Inside a unit of work (learning + history, a proposal's acceptance), the index follows a change
only once it commits: it never shows what the database may still undo.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from memory_guard.core.clock import Clock
from memory_guard.core.errors import DuplicateQuestion
from memory_guard.core.scope import Scope
from memory_guard.db.database import after_commit
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Change
from memory_guard.memory.entry import Entry, Status, entry_not_found
from memory_guard.memory.guard import Guard
from memory_guard.memory.index import VectorIndex
from memory_guard.memory.store import EntryFilter, MemoryStore, NewEntry

_KEY_LOCKS = 64
_EXPORT_PAGE = 500


class EntryWriter:
    def __init__(
        self, *, store: MemoryStore, index: VectorIndex, guard: Guard, clock: Clock, max_age: timedelta
    ) -> None:
        self._store = store
        self._index = index
        self._guard = guard  # what embeds a question as lookups will
        self._clock = clock
        self.max_age = max_age
        self._key_locks = [asyncio.Lock() for _ in range(_KEY_LOCKS)]

    def now(self) -> datetime:
        return self._clock()

    @property
    def embedding_model(self) -> str:
        """The model the index serves: what a newly embedded question is stored under."""
        return self._index.model_id

    async def embed(self, question: str) -> Vectors:
        return await self._guard.embed(question)

    async def embed_many(self, questions: Sequence[str]) -> Vectors:
        return await self._guard.embed_many(questions)

    # -- one question, one live entry ---------------------------------------------------------

    def key_lock(self, key: str) -> asyncio.Lock:
        """The lock of one exact-match key: two writers of the same new question wait in turn."""
        return self._key_locks[int(key[:8], 16) % len(self._key_locks)]

    async def refuse_duplicate(self, scope: Scope, key: str, but: int | None = None) -> None:
        """One live entry per question and scope (see `EntryService.create_faq`); `but`: the entry
        being changed."""
        known = await self._store.find_by_key(scope.tenant, key)
        held = [e for e in known if e.status is not Status.OBSOLETE and e.id != but]
        if held:
            raise DuplicateQuestion(held[0].id)

    async def requestioned(self, current: Entry, question: str, status: Status) -> dict[str, Any]:
        """The columns that follow a new question: its exact-match key and its vector. A live entry
        may not take a question that another live entry of its scope holds."""
        if question == current.question:
            return {}
        key = current.scope.key(question)
        if status is not Status.OBSOLETE:
            await self.refuse_duplicate(current.scope, key, but=current.id)
        return {
            "key_hash": key,
            "vector": await self.embed(question),
            "embedding_model": self.embedding_model,
        }

    # -- reads ---------------------------------------------------------------------------------

    async def find(self, tenant: str, entry_id: int) -> Entry | None:
        return await self._store.get(tenant, entry_id)

    async def get(self, tenant: str, entry_id: int) -> Entry:
        entry = await self._store.get(tenant, entry_id)
        if entry is None:
            raise entry_not_found(entry_id)
        return entry

    async def find_by_key(self, tenant: str, key: str) -> list[Entry]:
        return await self._store.find_by_key(tenant, key)

    async def statuses_by_key(self, tenant: str, keys: Sequence[str]) -> dict[str, set[Status]]:
        return await self._store.statuses_by_key(tenant, keys)

    async def every_entry(self, tenant: str, where: EntryFilter) -> AsyncIterator[Entry]:
        """The tenant's entries, newest first, read page by page."""
        before: int | None = None
        while True:
            entries = await self._store.list_entries(tenant, where, _EXPORT_PAGE, before)
            for entry in entries:
                yield entry
            if len(entries) < _EXPORT_PAGE:
                return
            before = entries[-1].id

    # -- writes --------------------------------------------------------------------------------

    async def insert(self, new: NewEntry, change: Change) -> Entry:
        entry = await self._store.insert(new, self._clock(), change)
        self._serve_later(entry, new.vector)
        return entry

    async def insert_many(self, news: Sequence[NewEntry], change: Change) -> list[Entry]:
        """Store prepared entries all at once (or none), and serve them from then on."""
        entries = await self._store.insert_many(news, self._clock(), change)
        for new, entry in zip(news, entries, strict=True):
            self._serve_later(entry, new.vector)
        return entries

    async def insert_unseen(
        self, news: Sequence[NewEntry], change: Change, pending: str
    ) -> list[tuple[Entry, Vectors | None]]:
        """Store an import's chunk unseen until the import `pending` is published; `serve` them then."""
        entries = await self._store.insert_many(news, self._clock(), change, pending)
        return [(entry, new.vector) for new, entry in zip(news, entries, strict=True)]

    def serve(self, stored: Sequence[tuple[Entry, Vectors | None]]) -> None:
        """Serve entries already stored (an import's, once published) from now on."""
        for entry, vector in stored:
            self._serve_later(entry, vector)

    async def update(self, tenant: str, entry_id: int, change: Change, fields: dict[str, Any]) -> Entry:
        """Set columns by name (`vector` sets the embedding), audited."""
        entry = await self.update_if_present(tenant, entry_id, change, fields)
        if entry is None:
            raise entry_not_found(entry_id)
        return entry

    async def update_if_present(
        self, tenant: str, entry_id: int, change: Change, fields: dict[str, Any]
    ) -> Entry | None:
        """`update`, or None when there is no such entry."""
        entry = await self._store.update(tenant, entry_id, self._clock(), change, **fields)
        if entry is None:
            return None
        if "vector" in fields:
            self._serve_later(entry, fields["vector"])
        else:
            stored = await self._store.vector(entry.id)
            self._serve_later(entry, stored[0] if stored else None)
        return entry

    async def delete(self, tenant: str, entry_id: int, change: Change) -> None:
        if not await self._store.delete(tenant, entry_id, self._clock(), change):
            raise entry_not_found(entry_id)
        self._index.remove(entry_id)

    # -- the index -------------------------------------------------------------------------------

    def _serve_later(self, entry: Entry, vector: Vectors | None) -> None:
        after_commit(lambda: self._put_in_index(entry, vector))

    def _put_in_index(self, entry: Entry, vector: Vectors | None) -> None:
        if entry.status is Status.OBSOLETE or vector is None or entry.embedding_model != self._index.model_id:
            self._index.remove(entry.id)
            return
        expiry = entry.effective_expiry(self.max_age).timestamp()
        self._index.put(entry.scope, entry.id, vector, entry.created_at.timestamp(), expiry)
