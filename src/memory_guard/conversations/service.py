"""Conversation history and client feedback on answers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory_guard.conversations.store import ConversationStore, Exchange, Message, NewMessage
from memory_guard.core.errors import Conflict, NotFound
from memory_guard.hits.service import HitService
from memory_guard.memory.proposal import ClientFeedback, FeedbackResult
from memory_guard.memory.proposals import ProposalService
from memory_guard.memory.variant_feedback import VariantOutcome, variant_effect
from memory_guard.memory.variants import VariantService


class ConversationService:
    def __init__(
        self,
        *,
        store: ConversationStore,
        proposals: ProposalService,
        hits: HitService,
        variants: VariantService,
    ) -> None:
        self._store = store
        self._proposals = proposals
        self._hits = hits
        self._variants = variants

    async def require(self, tenant: str, conversation_id: str) -> None:
        # Another tenant's conversation is reported as missing: its existence is not ours to reveal.
        if not await self._store.exists(tenant, conversation_id):
            raise NotFound(f"no conversation {conversation_id!r}", code="conversation_not_found")

    async def history(
        self, tenant: str, conversation_id: str, unwritten: Sequence[Exchange] = ()
    ) -> list[Message]:
        """The conversation so far, oldest first. `unwritten`: exchanges queued to be written
        after their answers (any conversation's), read before the stored ones: a follow-up is
        answered without waiting for the previous answer's bookkeeping."""
        pending = [
            message
            for exchange in unwritten
            if (exchange.tenant, exchange.conversation_id) == (tenant, conversation_id)
            for message in exchange.messages()
        ]
        if not pending:
            await self.require(tenant, conversation_id)
        stored = await self._store.messages(conversation_id)
        written = {message.id for message in stored}
        return sorted([*stored, *(m for m in pending if m.id not in written)], key=lambda m: m.id)

    def reserve_ids(self) -> tuple[int, int]:
        """The ids of a question and its answer, for an exchange queued to be written later."""
        return self._store.reserve_ids()

    async def record_exchange(
        self, tenant: str, conversation_id: str, question: NewMessage, answer: NewMessage, now: datetime
    ) -> tuple[int, int]:
        """Record a question and its answer together, or neither (the conversation is created if new);
        inside a unit of work, with it. Returns their ids."""
        return await self._store.append_exchange(tenant, conversation_id, question, answer, now)

    async def feedback(
        self,
        tenant: str,
        conversation_id: str,
        message_id: int,
        validated: bool,
        corrected: str | None,
        actor: str,
    ) -> FeedbackResult:
        """A client's feedback on an answer: applied or proposed to staff as memory/proposal.py
        rules; `actor` is the audit name of the client's key."""
        await self.require(tenant, conversation_id)
        message = await self._store.message(conversation_id, message_id)
        if message is None:
            raise NotFound(f"no message {message_id} in this conversation", code="message_not_found")
        if message.role != "assistant":
            raise Conflict("feedback applies to an answer, not to a question", code="not_an_answer")
        if message.entry_id is None:
            reason = message.metadata.get("not_learned", "unknown")
            raise Conflict(f"nothing was learned from this answer (reason: {reason})", code="nothing_learned")
        said = ClientFeedback(message.entry_id, conversation_id, message_id, validated, corrected, actor)
        variant_id = message.metadata.get("variant_id")
        if isinstance(variant_id, int):
            result = await self._through_variant(tenant, said, variant_id)
        else:
            result = await self._proposals.feedback(tenant, said)
        lookup_id = message.metadata.get("lookup_id")
        if message.type == "cached_response" and isinstance(lookup_id, int):
            # Feedback on an answer served from memory measures the guard, whatever it does to
            # the entry. Recorded once the feedback was taken, so a refused one leaves no review,
            # and after its commit, so the scope's floor is learned from it.
            correct = validated and corrected is None
            await self._hits.review(tenant, lookup_id, correct, by=actor)
        return result

    async def _through_variant(self, tenant: str, said: ClientFeedback, variant_id: int) -> FeedbackResult:
        """Feedback on an answer served through a question variant (memory/variant_feedback.py).
        The entry's rule runs first: a feedback it refuses (a blank correction) changes nothing."""
        variant = await self._variants.find(tenant, said.entry_id, variant_id)
        effect = variant_effect(variant, said.validated, said.corrected)
        if effect.entry_rule:
            result = await self._proposals.feedback(tenant, said)
        else:
            result = FeedbackResult(await self._variants.entry_of(tenant, said.entry_id), "unchanged")
        done: VariantOutcome = "unchanged"
        if variant is not None and effect.act == "confirm":
            confirmed = await self._variants.confirm(tenant, said.entry_id, variant, said.actor)
            if confirmed is not None and confirmed.confirmations > variant.confirmations:
                done = "confirmed"
        elif (
            variant is not None
            and effect.act == "remove"
            and await self._variants.reject(tenant, said.entry_id, variant, said.actor)
        ):
            done = "removed"
            if result.outcome == "unchanged":
                result = FeedbackResult(result.entry, "applied", result.proposal_id)
        return FeedbackResult(result.entry, result.outcome, result.proposal_id, (variant_id, done))
