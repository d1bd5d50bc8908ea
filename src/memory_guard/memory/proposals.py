"""Client feedback on entries, and the proposals it leaves for staff to accept or reject.

The rule of what a client's feedback may change by itself is in memory/proposal.py.
"""

from __future__ import annotations

from memory_guard.core.clock import Clock
from memory_guard.core.errors import Conflict, InvalidRequest, NotFound
from memory_guard.memory.audit import Action, Change
from memory_guard.memory.proposal import (
    Apply,
    ClientFeedback,
    FeedbackResult,
    Proposal,
    ProposalStatus,
    ProposalStore,
    Propose,
    accepted_change,
    feedback_effect,
)
from memory_guard.memory.service import MemoryService


class ProposalService:
    def __init__(self, store: ProposalStore, memory: MemoryService, clock: Clock) -> None:
        self.store = store
        self._memory = memory
        self._clock = clock

    async def feedback(self, tenant: str, said: ClientFeedback) -> FeedbackResult:
        """Apply what the rule lets a client change by itself, or store it as a proposal."""
        entries = self._memory.store
        async with self.store.atomic():
            # Read under the write lock: the rule judges the entry as the change will find it.
            entry = await entries.get(tenant, said.entry_id)
            if entry is None:
                raise NotFound(f"no memory entry {said.entry_id}", code="entry_not_found")
            effect = feedback_effect(entry, said)
            now = self._clock()
            result = FeedbackResult(entry, "unchanged")
            if isinstance(effect, Apply):
                change = Change(said.actor, Action.FEEDBACK)
                changed = await entries.update(tenant, entry.id, now, change, **effect.fields)
                assert changed is not None
                result = FeedbackResult(changed, "applied")
            elif isinstance(effect, Propose):
                proposal = Proposal(
                    id=0,
                    tenant=tenant,
                    entry_id=entry.id,
                    conversation_id=said.conversation_id,
                    message_id=said.message_id,
                    kind=effect.kind,
                    proposed_answer=effect.answer,
                    base_question=entry.question,
                    base_answer=entry.answer,
                    base_status=entry.status,
                    proposed_by=said.actor,
                    created_at=now,
                )
                result = FeedbackResult(entry, "proposed", await self.store.add(proposal))
        if result.outcome == "applied":
            await self._memory.entry_changed(result.entry)
        return result

    async def get(self, tenant: str, proposal_id: int) -> Proposal:
        proposal = await self.store.get(tenant, proposal_id)
        if proposal is None:
            raise NotFound(f"no proposal {proposal_id}", code="proposal_not_found")
        return proposal

    async def page(
        self, tenant: str, status: ProposalStatus | None, limit: int, cursor: str | None
    ) -> tuple[list[Proposal], str | None]:
        before = _cursor(cursor)
        items = await self.store.page(tenant, status, limit + 1, before)
        more = len(items) > limit
        items = items[:limit]
        return items, str(items[-1].id) if more and items else None

    async def accept(self, tenant: str, proposal_id: int, actor: str, force: bool) -> Proposal:
        """Apply a proposal to its entry, audited in the same transaction under the staff's name
        and the proposal's id. Refused (409) when the entry changed since, unless `force`."""
        entries = self._memory.store
        async with self.store.atomic():
            proposal = await self.get(tenant, proposal_id)
            action, fields = accepted_change(proposal, proposal.current, force)
            now = self._clock()
            change = Change(actor, action, proposal_id=proposal.id)
            entry = await entries.update(tenant, proposal.entry_id, now, change, **fields)
            if entry is None or not await self.store.decide(
                tenant, proposal.id, ProposalStatus.ACCEPTED, actor, now
            ):
                raise Conflict(f"proposal {proposal_id} could not be accepted", code="proposal_decided")
        await self._memory.entry_changed(entry)
        return await self.get(tenant, proposal_id)

    async def reject(self, tenant: str, proposal_id: int, actor: str, reason: str | None) -> Proposal:
        """Close a proposal without touching its entry."""
        proposal = await self.get(tenant, proposal_id)
        if proposal.status is not ProposalStatus.PENDING:
            raise Conflict(
                f"proposal {proposal_id} was already {proposal.status.value}", code="proposal_decided"
            )
        reason = reason.strip() if reason and reason.strip() else None
        if not await self.store.decide(
            tenant, proposal_id, ProposalStatus.REJECTED, actor, self._clock(), reason
        ):
            raise Conflict(f"proposal {proposal_id} was decided meanwhile", code="proposal_decided")
        return await self.get(tenant, proposal_id)


def _cursor(cursor: str | None) -> int | None:
    if cursor is None or cursor == "":
        return None
    if not cursor.isdigit() or len(cursor) > 18:
        raise InvalidRequest("cursor is not one this service gave out", code="invalid_cursor")
    return int(cursor)
