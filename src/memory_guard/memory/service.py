"""The memory service: learning and staff operations, with the index in step."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np

from memory_guard.core.clock import Clock, from_text
from memory_guard.core.errors import DuplicateQuestion, InvalidRequest, NotFound
from memory_guard.core.scope import Scope
from memory_guard.db.database import after_commit
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Action, AuditEvent, Change, restorable
from memory_guard.memory.edit import Edit
from memory_guard.memory.entry import Entry, Source, Status
from memory_guard.memory.guard import Guard, GuardResult
from memory_guard.memory.lookups import EntryUsage
from memory_guard.memory.store import AuditLog, EntryFilter, LookupLog, NewEntry

_KEY_LOCKS = 64
# Who the audit trail names for what the gateway learns by itself.
LEARNING_ACTOR = "memory-guard (learning)"
_LEARNED = Change(LEARNING_ACTOR, Action.CREATE)


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Entry]
    next_cursor: str | None
    scores: dict[int, float] | None = None  # a semantic search's score of each item, by entry id


class MemoryService:
    def __init__(
        self, guard: Guard, clock: Clock, audit: AuditLog, lookups: LookupLog, search_floor: float = 0.4
    ) -> None:
        self.guard = guard
        self._search_floor = search_floor
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
        # Inside a unit of work (learning + history), the index follows only once it commits.
        after_commit(lambda: self._put_in_index(entry, vector))

    def _put_in_index(self, entry: Entry, vector: Vectors | None) -> None:
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
        """Store a completed answer as `auto`. Returns (entry, None) or (None, why not).

        The caller holds `learning_lock` for the question, taken before any write transaction (a
        staff write takes the same lock first, then the writer: one order, no deadlock), so that
        two runs finishing the same new question at once do not both insert it.
        """
        key = scope.key(question)
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
        """A staff-written entry, validated. A question has one live entry per scope: writing it a
        second time is refused with the entry that holds it (to be edited instead), since two
        entries for one question would leave the newest silently shadowing the other. An obsolete
        entry does not count: a retired answer may be written anew."""
        key = scope.key(question)
        async with self._key_lock(key):
            await self._refuse_duplicate(scope, key)
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

    def learning_lock(self, scope: Scope, question: str) -> asyncio.Lock:
        """The lock `learn` must be called under (see there)."""
        return self._key_lock(scope.key(question))

    async def _refuse_duplicate(self, scope: Scope, key: str, but: int | None = None) -> None:
        """One live entry per question and scope (see `create_faq`); `but`: the entry being changed."""
        known = await self.store.find_by_key(scope.tenant, key)
        held = [e for e in known if e.status is not Status.OBSOLETE and e.id != but]
        if held:
            raise DuplicateQuestion(held[0].id)

    def _key_lock(self, key: str) -> asyncio.Lock:
        """The lock of one exact-match key: two writers of the same new question wait in turn."""
        return self._key_locks[int(key[:8], 16) % len(self._key_locks)]

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

    def serve(self, stored: Sequence[tuple[Entry, Vectors | None]]) -> None:
        """Serve entries already stored (an import's, once published) from now on."""
        for entry, vector in stored:
            self._sync_index(entry, vector)

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
            fields.update(
                await self._requestioned(current, edit.question, fields.get("status", current.status))
            )
        # A learned answer rewritten by staff is the staff's answer from then on.
        rewritten = fields.get("answer", current.answer) != current.answer
        if rewritten and current.source is Source.LEARNED and edit.action is not Action.FEEDBACK:
            fields["source"] = Source.STAFF
        return await self._write(tenant, entry_id, Change(actor, edit.action_for(fields)), fields)

    async def _requestioned(self, current: Entry, question: str, status: Status) -> dict[str, Any]:
        """The columns that follow a new question: its exact-match key and its vector. A live entry
        may not take a question that another live entry of its scope holds."""
        if question == current.question:
            return {}
        key = current.scope.key(question)
        if status is not Status.OBSOLETE:
            await self._refuse_duplicate(current.scope, key, but=current.id)
        return {
            "key_hash": key,
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
            fields.update(await self._requestioned(current, fields["question"], fields["status"]))
            return await self._write(tenant, event.entry_id, change, fields)
        scope = Scope(tenant, event.before["agent"], event.before["project"], event.before["phase"])
        if fields["status"] is not Status.OBSOLETE:
            await self._refuse_duplicate(scope, scope.key(fields["question"]))
        expiry = fields["expires_at"]
        # Its usage as it last stood (the deletion's snapshot), whichever event is undone.
        latest = (await self._audit.events(tenant, entry_id=event.entry_id, limit=1))[0]
        last_state = latest.after if latest.after is not None else latest.before
        assert last_state is not None
        last_used = last_state["last_used_at"]
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
            usage_count=int(last_state["usage_count"]),
            last_used_at=from_text(last_used) if last_used else None,
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
        """Semantic search over the tenant's entries, obsolete ones included (staff sees all): those
        scoring at least the search floor, best first (ties: newest first). The cursor is the last
        item's (score in millionths, id), so a page stays right when entries come or go meanwhile."""
        after = _search_cursor(cursor)
        rows = await self.store.search_vectors(tenant, where, self.index.model_id)
        if not rows:
            return Page([], None, {})
        ids = np.array([entry_id for entry_id, _ in rows], dtype=np.int64)
        matrix = np.stack([vector for _, vector in rows]).astype(np.float64)
        scores = matrix @ np.asarray(await self.guard.embed(query), dtype=np.float64)
        # Compared as whole millionths, shifted above zero (a cosine is down to -1): a score read back
        # from a cursor is then the very same number, written in digits only.
        micros = np.rint((scores + 1.0) * 1e6).astype(np.int64)
        keep = micros >= round((self._search_floor + 1.0) * 1e6)
        if after is not None:
            keep &= (micros < after[0]) | ((micros == after[0]) & (ids < after[1]))
        order = np.flatnonzero(keep)[np.lexsort((-ids[keep], -micros[keep]))][: limit + 1]
        chosen = [int(ids[i]) for i in order[:limit]]
        entries = await self.store.get_many(tenant, chosen)
        items = [entries[i] for i in chosen if i in entries]
        found = {int(ids[i]): round(float(scores[i]), 4) for i in order[:limit]}
        more = len(order) > limit
        last = order[limit - 1] if more else None
        next_cursor = f"{int(micros[last])}:{int(ids[last])}" if last is not None else None
        return Page(items, next_cursor, found)

    # -- changes made elsewhere --------------------------------------------------------------

    async def entry_changed(self, entry: Entry) -> None:
        """Serve an entry changed through the store by another service (client feedback and the
        proposals staff accept, memory/proposals.py) as it now stands."""
        await self._refresh_index(entry)


def _search_cursor(cursor: str | None) -> tuple[int, int] | None:
    """(score + 1 in millionths, entry id) of the last item a search page showed."""
    if cursor is None or cursor == "":
        return None
    score, _, entry_id = cursor.partition(":")
    if not (score.isdigit() and entry_id.isdigit()) or len(score) > 9 or len(entry_id) > 18:
        raise InvalidRequest("cursor is not one this search gave out", code="invalid_cursor")
    return int(score), int(entry_id)


def _int_cursor(cursor: str | None) -> int | None:
    if cursor is None or cursor == "":
        return None
    if not cursor.isdigit():
        raise InvalidRequest("cursor is not one this service gave out", code="invalid_cursor")
    return int(cursor)
