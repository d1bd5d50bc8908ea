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
from memory_guard.memory.audit import Action, AuditEvent, Change, restorable
from memory_guard.memory.edit import Edit
from memory_guard.memory.entry import Entry, Scope, Source, Status
from memory_guard.memory.guard import Guard, GuardResult
from memory_guard.memory.lookups import EntryUsage
from memory_guard.memory.storage import AuditLog, EntryFilter, LookupLog, NewEntry

_KEY_LOCKS = 64
# Who the audit trail names for what the gateway learns by itself.
LEARNING_ACTOR = "memory-guard (learning)"
_LEARNED = Change(LEARNING_ACTOR, Action.CREATE)


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Entry]
    next_cursor: str | None


class MemoryService:
    def __init__(self, guard: Guard, clock: Clock, audit: AuditLog, lookups: LookupLog) -> None:
        self.guard = guard
        self.store = guard.store
        self.index = guard.index
        self._clock = clock
        self._audit = audit
        self._lookups = lookups
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
        key = scope.key(question)
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
                Change(LEARNING_ACTOR, Action.EDIT),
                answer=answer,
                metadata=metadata,
                vector=vector,
                embedding_model=self.guard.embedder.model_id,
            )
            assert renewed is not None
            self._sync_index(renewed, vector)
            return renewed, None

    # -- staff -----------------------------------------------------------------------------

    async def create_faq(
        self, scope: Scope, question: str, answer: str, tags: Sequence[str], actor: str
    ) -> Entry:
        vector = await self.guard.embed(question)
        return await self._insert(
            scope,
            question,
            answer,
            Status.VALIDATED,
            Source.FAQ,
            vector,
            tags=tags,
            change=Change(actor, Action.CREATE),
        )

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
        change: Change = _LEARNED,
    ) -> Entry:
        key = scope.key(question)
        new = NewEntry(
            scope, question, answer, key, status, source, vector, self.guard.embedder.model_id, tags, metadata
        )
        entry = await self.store.insert(new, self._clock(), change)
        self._sync_index(entry, vector)
        return entry

    async def insert_many(self, news: Sequence[NewEntry], change: Change) -> list[Entry]:
        """Store prepared entries all at once (or none), and serve them from then on."""
        entries = await self.store.insert_many(news, self._clock(), change)
        for new, entry in zip(news, entries, strict=True):
            self._sync_index(entry, new.vector)
        return entries

    async def get(self, tenant: str, entry_id: int) -> Entry:
        entry = await self.store.get(tenant, entry_id)
        if entry is None:
            raise NotFound(f"no memory entry {entry_id}", code="entry_not_found")
        return entry

    async def update(self, tenant: str, entry_id: int, edit: Edit, actor: str) -> Entry:
        """Apply a staff edit; a new question is re-embedded, and the change is audited."""
        current = await self.get(tenant, entry_id)
        fields = edit.fields(current)
        if edit.question is not None:
            fields.update(await self._requestioned(current, edit.question))
        # A learned answer rewritten by staff is the staff's answer from then on.
        rewritten = fields.get("answer", current.answer) != current.answer
        if rewritten and current.source is Source.LEARNED and edit.action is not Action.FEEDBACK:
            fields["source"] = Source.STAFF
        return await self._write(tenant, entry_id, Change(actor, edit.action_for(fields)), fields)

    async def _requestioned(self, current: Entry, question: str) -> dict[str, Any]:
        """The columns that follow a new question: its exact-match key and its vector."""
        if question == current.question:
            return {}
        return {
            "key_hash": current.scope.key(question),
            "vector": await self.guard.embed(question),
            "embedding_model": self.guard.embedder.model_id,
        }

    async def _write(self, tenant: str, entry_id: int, change: Change, fields: dict[str, Any]) -> Entry:
        entry = await self.store.update(tenant, entry_id, self._clock(), change, **fields)
        if entry is None:
            raise NotFound(f"no memory entry {entry_id}", code="entry_not_found")
        await self._refresh_index(entry)
        return entry

    async def set_status(self, tenant: str, entry_id: int, status: Status, actor: str) -> Entry:
        return await self.update(tenant, entry_id, Edit(status=status), actor)

    async def delete(self, tenant: str, entry_id: int, actor: str) -> None:
        if not await self.store.delete(tenant, entry_id, self._clock(), Change(actor, Action.DELETE)):
            raise NotFound(f"no memory entry {entry_id}", code="entry_not_found")
        self.index.remove(entry_id)

    async def prune(self, tenant: str, actor: str) -> int:
        return await self.guard.prune(tenant, Change(actor, Action.PRUNE))

    async def history(self, tenant: str, entry_id: int) -> list[AuditEvent]:
        """Every recorded change of an entry, newest first; a deleted entry keeps its history."""
        events = await self._audit.events(tenant, entry_id=entry_id, limit=500)
        if not events:
            await self.get(tenant, entry_id)
        return events

    async def audit_log(
        self, tenant: str, entry_id: int | None, actions: Sequence[Action], limit: int, cursor: str | None
    ) -> tuple[list[AuditEvent], str | None]:
        events = await self._audit.events(
            tenant, entry_id=entry_id, actions=actions, limit=limit + 1, before_id=_int_cursor(cursor)
        )
        more = len(events) > limit
        events = events[:limit]
        return events, str(events[-1].id) if more and events else None

    async def restore(self, tenant: str, event_id: int, actor: str) -> Entry:
        """Bring an entry back to its state before a recorded change; a deleted or pruned entry
        comes back under its own id."""
        event = await self._audit.event(tenant, event_id)
        if event is None:
            raise NotFound(f"no audit event {event_id}", code="audit_event_not_found")
        if event.before is None:
            raise InvalidRequest(
                "this event created the entry, so there is nothing before it to restore",
                code="nothing_to_restore",
            )
        fields = restorable(event.before)
        change = Change(actor, Action.RESTORE)
        current = await self.store.get(tenant, event.entry_id)
        if current is not None:
            fields.update(await self._requestioned(current, fields["question"]))
            return await self._write(tenant, event.entry_id, change, fields)
        scope = Scope(tenant, event.before["agent"], event.before["project"], event.before["phase"])
        expiry = fields["expires_at"]
        new = NewEntry(
            scope,
            fields["question"],
            fields["answer"],
            scope.key(fields["question"]),
            fields["status"],
            fields["source"],
            await self.guard.embed(fields["question"]),
            self.guard.embedder.model_id,
            fields["tags"],
            fields["metadata"],
            # An expiry already past would have the restored entry pruned again at once.
            expiry if expiry and expiry > self._clock() else None,
            id=event.entry_id,
        )
        return (await self.insert_many([new], change))[0]

    async def usage(self, tenant: str, entry_id: int) -> tuple[Entry, EntryUsage]:
        entry = await self.get(tenant, entry_id)
        return entry, await self._lookups.usage(tenant, entry_id)

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

    # -- feedback --------------------------------------------------------------------------

    async def feedback(self, tenant: str, entry_id: int, validated: bool, corrected: str | None) -> Entry:
        """A correction validates the corrected answer; a plain no marks the entry obsolete."""
        if corrected is not None:
            edit = Edit(answer=corrected, status=Status.VALIDATED, action=Action.FEEDBACK)
        else:
            edit = Edit(status=Status.VALIDATED if validated else Status.OBSOLETE, action=Action.FEEDBACK)
        return await self.update(tenant, entry_id, edit, actor="client feedback")


def _int_cursor(cursor: str | None) -> int | None:
    if cursor is None or cursor == "":
        return None
    if not cursor.isdigit():
        raise InvalidRequest("cursor is not one this service gave out", code="invalid_cursor")
    return int(cursor)
