"""Client feedback on entries, and the proposals it leaves for staff to accept or reject.

The rule of what a client's feedback may change by itself is in memory/proposal.py.
"""

from __future__ import annotations

from memory_guard.core.clock import Clock
from memory_guard.core.errors import Conflict, NotFound
from memory_guard.core.paging import cut_page, id_cursor
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
from memory_guard.memory.writer import EntryWriter


class ProposalService:
    def __init__(self, *, store: ProposalStore, writer: EntryWriter, clock: Clock) -> None:
        self._store = store
        self._writer = writer
        self._clock = clock

    async def feedback(self, tenant: str, said: ClientFeedback) -> FeedbackResult:
        """Apply what the rule lets a client change by itself, or store it as a proposal."""
        async with self._store.atomic():
            # Read under the write lock: the rule judges the entry as the change will find it.
            entry = await self._writer.get(tenant, said.entry_id)
            effect = feedback_effect(entry, said)
            now = self._clock()
            result = FeedbackResult(entry, "unchanged")
            if isinstance(effect, Apply):
                change = Change(said.actor, Action.FEEDBACK)
                # Served as changed once the transaction commits (the writer sees to it).
                changed = await self._writer.update(tenant, entry.id, change, effect.fields)
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
                result = FeedbackResult(entry, "proposed", await self._store.add(proposal))
        return result

    async def get(self, tenant: str, proposal_id: int) -> Proposal:
        proposal = await self._store.get(tenant, proposal_id)
        if proposal is None:
            raise NotFound(f"no proposal {proposal_id}", code="proposal_not_found")
        return proposal

    async def page(
        self, tenant: str, status: ProposalStatus | None, limit: int, cursor: str | None
    ) -> tuple[list[Proposal], str | None]:
        rows = await self._store.page(tenant, status, limit + 1, id_cursor(cursor))
        items, next_id = cut_page(rows, limit, lambda proposal: proposal.id)
        return items, None if next_id is None else str(next_id)

    async def accept(self, tenant: str, proposal_id: int, actor: str, force: bool) -> Proposal:
        """Apply a proposal to its entry, audited in the same transaction under the staff's name
        and the proposal's id. Refused (409) when the entry changed since, unless `force`."""
        async with self._store.atomic():
            proposal = await self.get(tenant, proposal_id)
            action, fields = accepted_change(proposal, proposal.current, force)
            now = self._clock()
            change = Change(actor, action, proposal_id=proposal.id)
            entry = await self._writer.update_if_present(tenant, proposal.entry_id, change, fields)
            if entry is None or not await self._store.decide(
                tenant, proposal.id, ProposalStatus.ACCEPTED, actor, now
            ):
                raise Conflict(f"proposal {proposal_id} could not be accepted", code="proposal_decided")
        return await self.get(tenant, proposal_id)

    async def reject(self, tenant: str, proposal_id: int, actor: str, reason: str | None) -> Proposal:
        """Close a proposal without touching its entry."""
        proposal = await self.get(tenant, proposal_id)
        if proposal.status is not ProposalStatus.PENDING:
            raise Conflict(
                f"proposal {proposal_id} was already {proposal.status.value}", code="proposal_decided"
            )
        reason = reason.strip() if reason and reason.strip() else None
        if not await self._store.decide(
            tenant, proposal_id, ProposalStatus.REJECTED, actor, self._clock(), reason
        ):
            raise Conflict(f"proposal {proposal_id} was decided meanwhile", code="proposal_decided")
        return await self.get(tenant, proposal_id)
