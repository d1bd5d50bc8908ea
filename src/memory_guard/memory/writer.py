"""The one way entries are written: to the store, with the similarity index kept in step.

The services that change entries one by one or by import (staff edits, learning, restores,
imports, client feedback and accepted proposals) write through an `EntryWriter`, so none of them
holds the store or the index. Two bulk changes stay with their owners: the guard prunes expired
entries (and drops them from its index), and the `reindex` command re-embeds stored questions.
Inside a unit of work (learning + history, a proposal's acceptance), the index follows a change
only once it commits: it never shows what the database may still undo. An entry's question
variants follow it in the index (memory/variants.py adds and removes them).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from memory_guard.core.clock import Clock
from memory_guard.core.errors import DuplicateQuestion
from memory_guard.core.scope import Scope
from memory_guard.db.unit_of_work import after_commit
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Change
from memory_guard.memory.entry import Entry, Status, entry_not_found
from memory_guard.memory.guard import Guard
from memory_guard.memory.index import VectorIndex
from memory_guard.memory.store import EntryFilter, MemoryStore, NewEntry
from memory_guard.memory.variant import Holder, Variant, VariantStore

_KEY_LOCKS = 64
_EXPORT_PAGE = 500


class EntryWriter:
    def __init__(
        self,
        *,
        store: MemoryStore,
        variants: VariantStore,
        index: VectorIndex,
        guard: Guard,
        clock: Clock,
        max_age: timedelta,
    ) -> None:
        self._store = store
        self._variants = variants
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
        """One live entry per question and scope (see `EntryService.create_faq`), whether it holds
        the question as its own or as a variant; `but`: the entry being changed."""
        holders = (await self._variants.holders(scope.tenant, [key])).get(key, [])
        held = [holder for holder in holders if holder.entry_id != but]
        if held:
            raise DuplicateQuestion(held[0].entry_id)

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

    async def holders(self, tenant: str, keys: Sequence[str]) -> dict[str, list[Holder]]:
        """Who holds each wording among live entries, as a question or as a variant."""
        return await self._variants.holders(tenant, keys)

    async def variants_of(self, tenant: str, entry_ids: Sequence[int]) -> dict[int, list[Variant]]:
        return await self._variants.of_entries(tenant, entry_ids)

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

    async def serve_variants(self, entries: Sequence[Entry]) -> None:
        """Serve the stored variants of entries already served (an import's, once published)."""
        found = await self._variants.vectors([entry.id for entry in entries], self.embedding_model)
        for entry in entries:
            if entry.id in found:
                self._serve_later(entry, None, found[entry.id], question=False)

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
        # Its variants too: an entry brought back from obsolete is served through every wording.
        variants = (await self._variants.vectors([entry.id], self.embedding_model)).get(entry.id, [])
        if "vector" in fields:
            self._serve_later(entry, fields["vector"], variants)
        else:
            stored = await self._store.vector(entry.id)
            self._serve_later(entry, stored[0] if stored else None, variants)
        return entry

    async def delete(self, tenant: str, entry_id: int, change: Change) -> None:
        if not await self._store.delete(tenant, entry_id, self._clock(), change):
            raise entry_not_found(entry_id)
        self._index.remove(entry_id)

    # -- the index -------------------------------------------------------------------------------

    def _serve_later(
        self,
        entry: Entry,
        vector: Vectors | None,
        variants: Sequence[tuple[int, Vectors]] = (),
        question: bool = True,
    ) -> None:
        after_commit(lambda: self._put_in_index(entry, vector, variants, question))

    def _put_in_index(
        self, entry: Entry, vector: Vectors | None, variants: Sequence[tuple[int, Vectors]], question: bool
    ) -> None:
        """Serve an entry's question (unless not `question`: left as it is) and `variants`; an
        obsolete entry leaves the index with every wording."""
        if entry.status is Status.OBSOLETE:
            self._index.remove(entry.id)
            return
        created, expiry = entry.created_at.timestamp(), entry.effective_expiry(self.max_age).timestamp()
        if question:
            if vector is not None and entry.embedding_model == self._index.model_id:
                self._index.put(entry.scope, entry.id, vector, created, expiry)
            else:
                self._index.remove(entry.id)  # its variants with it: the ones to serve follow
        for variant_id, variant_vector in variants:
            self._index.put_variant(entry.scope, entry.id, variant_id, variant_vector, created, expiry)

    def serve_variant(self, entry: Entry, variant_id: int, vector: Vectors | None) -> None:
        """Serve a variant just stored, with its entry's scope and dates (not an obsolete entry's)."""
        if vector is not None and entry.status is not Status.OBSOLETE:
            self._serve_later(entry, None, [(variant_id, vector)], question=False)

    def forget_variant(self, entry_id: int, variant_id: int) -> None:
        after_commit(lambda: self._index.remove_variant(entry_id, variant_id))
