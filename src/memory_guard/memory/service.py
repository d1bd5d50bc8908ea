"""The memory service: learning, staff operations and feedback, with the index in step."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np

from memory_guard.clock import Clock
from memory_guard.embeddings.base import Vectors
from memory_guard.errors import InvalidRequest, NotFound
from memory_guard.hits.service import HitService
from memory_guard.memory.entry import Entry, Scope, Source, Status
from memory_guard.memory.guard import Guard, GuardResult
from memory_guard.memory.normalize import key_hash
from memory_guard.memory.storage import EntryFilter, NewEntry
from memory_guard.verify.judge import JudgementStore

_KEY_LOCKS = 64


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Entry]
    next_cursor: str | None


class MemoryService:
    def __init__(
        self, guard: Guard, clock: Clock, hits: HitService, judgements: JudgementStore | None = None
    ) -> None:
        self.guard = guard
        self.store = guard.store
        self.index = guard.index
        self._clock = clock
        self._hits = hits
        self._judgements = judgements
        self._key_locks = [asyncio.Lock() for _ in range(_KEY_LOCKS)]

    @property
    def max_age(self) -> timedelta:
        return self.guard.thresholds.max_age

    # -- index bookkeeping ---------------------------------------------------------------

    def _sync_index(self, entry: Entry, vector: Vectors | None) -> None:
        if entry.status is Status.OBSOLETE or vector is None or entry.embedding_model != self.index.model_id:
            self.index.remove(entry.id)
            return
        expiry = entry.effective_expiry(self.max_age).timestamp()
        self.index.put(entry.scope, entry.id, vector, entry.created_at.timestamp(), expiry)

    async def _refresh_index(self, entry: Entry) -> None:
        stored = await self.store.vector(entry.id)
        self._sync_index(entry, stored[0] if stored else None)

    # -- learning --------------------------------------------------------------------------

    async def learn(
        self,
        scope: Scope,
        question: str,
        answer: str,
        metadata: dict[str, Any],
        vector: Vectors | None,
        replace: bool,
    ) -> tuple[Entry | None, str | None]:
        """Store a completed answer as `auto`. Returns (entry, None) or (None, why not)."""
        key = key_hash(scope.tenant, scope.agent, scope.project, scope.phase, question)
        # Two runs finishing the same new question at once must not both insert it.
        async with self._key_locks[int(key[:8], 16) % len(self._key_locks)]:
            now = self._clock()
            known = [
                e for e in await self.store.find_by_key(scope.tenant, key) if e.status is not Status.OBSOLETE
            ]
            live = [e for e in known if e.servable(now, self.max_age)]
            if any(e.status is Status.VALIDATED for e in live):
                return None, "validated_entry_exists"
            if live and not replace:
                return None, "already_known"
            if vector is None:
                vector = await self.guard.embed(question)
            # An expired or refreshed `auto` entry is renewed in place rather than duplicated.
            target = next((e for e in known if e.status is Status.AUTO), None)
            if target is None:
                entry = await self._insert(
                    scope, question, answer, Status.AUTO, Source.LEARNED, vector, metadata=metadata
                )
                return entry, None
            renewed = await self.store.update(
                scope.tenant,
                target.id,
                now,
                answer=answer,
                metadata=metadata,
                vector=vector,
                embedding_model=self.guard.embedder.model_id,
            )
            assert renewed is not None
            self._sync_index(renewed, vector)
            return renewed, None

    # -- staff -----------------------------------------------------------------------------

    async def create_faq(self, scope: Scope, question: str, answer: str, tags: Sequence[str]) -> Entry:
        vector = await self.guard.embed(question)
        return await self._insert(scope, question, answer, Status.VALIDATED, Source.FAQ, vector, tags=tags)

    async def _insert(
        self,
        scope: Scope,
        question: str,
        answer: str,
        status: Status,
        source: Source,
        vector: Vectors,
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
    ) -> Entry:
        key = key_hash(scope.tenant, scope.agent, scope.project, scope.phase, question)
        new = NewEntry(
            scope, question, answer, key, status, source, vector, self.guard.embedder.model_id, tags, metadata
        )
        entry = await self.store.insert(new, self._clock())
        self._sync_index(entry, vector)
        return entry

    async def get(self, tenant: str, entry_id: int) -> Entry:
        entry = await self.store.get(tenant, entry_id)
        if entry is None:
            raise NotFound(f"no memory entry {entry_id}", code="entry_not_found")
        return entry

    async def update(
        self,
        tenant: str,
        entry_id: int,
        *,
        answer: str | None = None,
        status: Status | None = None,
        tags: Sequence[str] | None = None,
        by_staff: bool = False,
    ) -> Entry:
        current = await self.get(tenant, entry_id)
        fields: dict[str, Any] = {}
        if answer is not None:
            if not answer.strip():
                raise InvalidRequest("the answer must not be empty", code="empty_answer")
            fields["answer"] = answer
            # A learned answer rewritten by staff is the staff's answer from then on.
            if by_staff and answer != current.answer and current.source is Source.LEARNED:
                fields["source"] = Source.STAFF
        if status is not None:
            fields["status"] = status
        if tags is not None:
            fields["tags"] = list(tags)
        entry = await self.store.update(tenant, entry_id, self._clock(), **fields)
        if entry is None:
            raise NotFound(f"no memory entry {entry_id}", code="entry_not_found")
        await self._refresh_index(entry)
        return entry

    async def delete(self, tenant: str, entry_id: int) -> None:
        if not await self.store.delete(tenant, entry_id):
            raise NotFound(f"no memory entry {entry_id}", code="entry_not_found")
        self.index.remove(entry_id)

    async def prune(self, tenant: str) -> int:
        return await self.guard.prune(tenant)

    async def lookup(self, scope: Scope, question: str) -> GuardResult:
        return await self.guard.inspect(scope, question)

    async def list_entries(
        self, tenant: str, where: EntryFilter, limit: int, cursor: str | None, query: str | None
    ) -> Page:
        if query:
            return await self._search(tenant, where, limit, cursor, query)
        before = _int_cursor(cursor)
        items = await self.store.list_entries(tenant, where, limit + 1, before)
        more = len(items) > limit
        items = items[:limit]
        return Page(items, str(items[-1].id) if more and items else None)

    async def _search(
        self, tenant: str, where: EntryFilter, limit: int, cursor: str | None, query: str
    ) -> Page:
        """Semantic search over the tenant's entries, obsolete ones included (staff sees all)."""
        offset = _int_cursor(cursor) or 0
        rows = await self.store.search_vectors(tenant, where, self.index.model_id)
        if not rows:
            return Page([], None)
        ids = np.array([entry_id for entry_id, _ in rows])
        matrix = np.stack([vector for _, vector in rows])
        scores = matrix @ await self.guard.embed(query)
        order = np.lexsort((-ids, -np.round(scores, 6)))[offset : offset + limit + 1]
        chosen = [int(ids[i]) for i in order]
        entries = await self.store.get_many(tenant, chosen[:limit])
        items = [entries[i] for i in chosen[:limit] if i in entries]
        more = len(chosen) > limit
        return Page(items, str(offset + limit) if more else None)

    async def stats(self, tenant: str) -> dict[str, Any]:
        counts = await self.store.count_by_status(tenant)
        totals = await self.store.lookup_totals(tenant)
        decided = sum(totals.by_decision[d] for d in ("direct", "assisted", "miss"))
        direct = totals.by_decision["direct"]
        return {
            "entries": {**counts, "total": sum(counts.values())},
            "lookups": {
                "total": decided,
                **{d: totals.by_decision[d] for d in ("direct", "assisted", "miss")},
            },
            "hit_rate": round(direct / decided, 4) if decided else 0.0,
            "llm_calls_avoided": direct,
            "tokens_saved": totals.tokens_saved,
            "served": await self._hits.stats(tenant),
            "judge": await self._judge_stats(tenant),
        }

    async def _judge_stats(self, tenant: str) -> dict[str, Any]:
        """What the LLM judge cost: its verdicts kept stay counted after it is switched off."""
        calls = prompt_tokens = completion_tokens = 0
        if self._judgements is not None:
            totals = await self._judgements.totals(tenant)
            calls, prompt_tokens, completion_tokens = (
                totals.calls,
                totals.prompt_tokens,
                totals.completion_tokens,
            )
        return {
            "enabled": self.guard.judge is not None,
            "calls": calls,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
        }

    # -- feedback --------------------------------------------------------------------------

    async def feedback(self, tenant: str, entry_id: int, validated: bool, corrected: str | None) -> Entry:
        """A correction validates the corrected answer; a plain no marks the entry obsolete."""
        if corrected is not None:
            return await self.update(tenant, entry_id, answer=corrected, status=Status.VALIDATED)
        return await self.update(tenant, entry_id, status=Status.VALIDATED if validated else Status.OBSOLETE)


def _int_cursor(cursor: str | None) -> int | None:
    if cursor is None or cursor == "":
        return None
    if not cursor.isdigit():
        raise InvalidRequest("cursor is not one this service gave out", code="invalid_cursor")
    return int(cursor)
