"""The audit trail as staff read it (an entry's history, the tenant's log) and the undoing of
what it records."""

from __future__ import annotations

from collections.abc import Sequence

from memory_guard.core.clock import from_text
from memory_guard.core.errors import InvalidRequest, NotFound
from memory_guard.core.paging import cut_page, id_cursor
from memory_guard.core.scope import Scope
from memory_guard.memory.audit import VARIANT_ACTIONS, Action, AuditEvent, Change, restorable
from memory_guard.memory.entry import Entry, Status
from memory_guard.memory.store import AuditLog, NewEntry
from memory_guard.memory.writer import EntryWriter

_HISTORY_EVENTS = 500


class AuditTrail:
    def __init__(self, *, audit: AuditLog, writer: EntryWriter) -> None:
        self._audit = audit
        self._writer = writer

    async def history(self, tenant: str, entry_id: int) -> list[AuditEvent]:
        """Every recorded change of an entry, newest first; a deleted entry keeps its history."""
        events = await self._audit.events(tenant, entry_id=entry_id, limit=_HISTORY_EVENTS)
        if not events:
            await self._writer.get(tenant, entry_id)
        return events

    async def audit_log(
        self, tenant: str, entry_id: int | None, actions: Sequence[Action], limit: int, cursor: str | None
    ) -> tuple[list[AuditEvent], str | None]:
        rows = await self._audit.events(
            tenant, entry_id=entry_id, actions=actions, limit=limit + 1, before_id=id_cursor(cursor)
        )
        events, next_id = cut_page(rows, limit, lambda event: event.id)
        return events, None if next_id is None else str(next_id)

    async def restore(self, tenant: str, event_id: int, actor: str) -> Entry:
        """Bring an entry back to its state before a recorded change; a deleted or pruned entry
        comes back under its own id."""
        event = await self._audit.event(tenant, event_id)
        if event is None:
            raise NotFound(f"no audit event {event_id}", code="audit_event_not_found")
        if event.action in VARIANT_ACTIONS:
            raise InvalidRequest(
                "this event changed a question variant, not the entry: add or remove the variant instead",
                code="variant_event",
            )
        if event.before is None:
            raise InvalidRequest(
                "this event created the entry, so there is nothing before it to restore",
                code="nothing_to_restore",
            )
        writer = self._writer
        fields = restorable(event.before)
        change = Change(actor, Action.RESTORE)
        current = await writer.find(tenant, event.entry_id)
        if current is not None:
            fields.update(await writer.requestioned(current, fields["question"], fields["status"]))
            return await writer.update(tenant, event.entry_id, change, fields)
        scope = Scope(tenant, event.before["agent"], event.before["project"], event.before["phase"])
        if fields["status"] is not Status.OBSOLETE:
            await writer.refuse_duplicate(scope, scope.key(fields["question"]))
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
            await writer.embed(fields["question"]),
            writer.embedding_model,
            fields["tags"],
            fields["metadata"],
            # An expiry already past would have the restored entry pruned again at once.
            expiry if expiry and expiry > writer.now() else None,
            id=event.entry_id,
            usage_count=int(last_state["usage_count"]),
            last_used_at=from_text(last_used) if last_used else None,
        )
        return (await writer.insert_many([new], change))[0]
