"""Staff's writing of entries: create, read, edit, change status, delete, prune."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from memory_guard.core.scope import Scope
from memory_guard.memory.audit import Action, Change
from memory_guard.memory.edit import Edit
from memory_guard.memory.entry import Entry, Source, Status, clean_tags
from memory_guard.memory.guard import Guard
from memory_guard.memory.store import NewEntry
from memory_guard.memory.writer import EntryWriter


class EntryService:
    def __init__(self, *, writer: EntryWriter, guard: Guard) -> None:
        self._writer = writer
        self._guard = guard  # prunes what has expired, as its lookups do

    @property
    def max_age(self) -> timedelta:
        """How long an entry serves after its last update, unless its own expiry comes first."""
        return self._writer.max_age

    async def create_faq(
        self, scope: Scope, question: str, answer: str, tags: Sequence[str], actor: str
    ) -> Entry:
        """A staff-written entry, validated. A question has one live entry per scope: writing it a
        second time is refused with the entry that holds it (to be edited instead), since two
        entries for one question would leave the newest silently shadowing the other. An obsolete
        entry does not count: a retired answer may be written anew."""
        key = scope.key(question)
        async with self._writer.key_lock(key):
            await self._writer.refuse_duplicate(scope, key)
            vector = await self._writer.embed(question)
            new = NewEntry(
                scope,
                question,
                answer,
                key,
                Status.VALIDATED,
                Source.FAQ,
                vector,
                self._writer.embedding_model,
                clean_tags(tags),
            )
            return await self._writer.insert(new, Change(actor, Action.CREATE))

    async def get(self, tenant: str, entry_id: int) -> Entry:
        return await self._writer.get(tenant, entry_id)

    async def update(self, tenant: str, entry_id: int, edit: Edit, actor: str) -> Entry:
        """Apply a staff edit; a new question is re-embedded, and the change is audited."""
        current = await self._writer.get(tenant, entry_id)
        fields = edit.fields(current)
        if edit.question is not None:
            status = fields.get("status", current.status)
            fields.update(await self._writer.requestioned(current, edit.question, status))
        # A learned answer rewritten by staff is the staff's answer from then on.
        rewritten = fields.get("answer", current.answer) != current.answer
        if rewritten and current.source is Source.LEARNED and edit.action is not Action.FEEDBACK:
            fields["source"] = Source.STAFF
        return await self._writer.update(tenant, entry_id, Change(actor, edit.action_for(fields)), fields)

    async def set_status(self, tenant: str, entry_id: int, status: Status, actor: str) -> Entry:
        return await self.update(tenant, entry_id, Edit(status=status), actor)

    async def delete(self, tenant: str, entry_id: int, actor: str) -> None:
        await self._writer.delete(tenant, entry_id, Change(actor, Action.DELETE))

    async def prune(self, tenant: str, actor: str) -> int:
        return await self._guard.prune(tenant, Change(actor, Action.PRUNE))
