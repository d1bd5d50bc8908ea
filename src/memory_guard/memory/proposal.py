"""Client feedback that would change shared memory becomes a proposal staff accept or reject.

THE RULE (the one place it is decided; `feedback_effect` applies it):

A client's feedback is heard by every user of the tenant once it changes an entry, so a client
never rewrites memory by itself. Only a change that can take no right answer away from anyone,
and that puts nothing of the client's into memory, applies at once:

- on a learned `auto` entry: a "no" is **applied** (the entry turns obsolete); a "yes" proposes
  to validate it; a correction proposes the corrected answer;
- on an entry staff vouched for (`validated`, or a FAQ, staff or document text): a "yes" changes
  nothing when it is validated already (else proposes to validate); a "no" proposes to retire
  it; a correction proposes the corrected answer;
- on an `obsolete` entry: a "no" changes nothing; a "yes" or a correction is proposed.

Why:
- A correction is text from one client served to all: applied at once it would let any client
  poison the answers of every other user, learned ones included. It always waits for staff.
- A "yes" on a learned entry is a proposal too: `validated` is what staff vouch for, it shields an
  entry from the LLM's refresh and from other clients' "no", so a client may ask for it, not grant it.
- A "no" on a learned `auto` entry still retires it at once: it can only make the gateway answer
  less from memory (the LLM answers instead and may learn again), never serve a wrong answer, and
  the audit trail keeps it undoable. On anything staff vouched for, it waits for staff.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, Protocol

from memory_guard.core.actor import describe_actor
from memory_guard.core.clock import to_text
from memory_guard.core.errors import Conflict, InvalidRequest
from memory_guard.memory.audit import Action
from memory_guard.memory.entry import Entry, Source, Status


class ProposalKind(StrEnum):
    VALIDATE = "validate"
    CORRECT = "correct"
    RETIRE = "retire"


class ProposalStatus(StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


Outcome = Literal["applied", "proposed", "unchanged"]

# Texts that staff wrote or vouched for: a client's "no" does not retire them by itself.
_STAFF_SOURCES = frozenset({Source.FAQ, Source.STAFF, Source.DOCUMENT})


@dataclass(frozen=True, slots=True)
class ClientFeedback:
    """What a client said of one answer, and who said it (the audit name of the key, never the key)."""

    entry_id: int
    conversation_id: str
    message_id: int
    validated: bool
    corrected: str | None
    actor: str


@dataclass(frozen=True, slots=True)
class Apply:
    """Change the entry now (the rule allows it), audited as client feedback."""

    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Propose:
    kind: ProposalKind
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class Unchanged:
    """The feedback asks for what the entry already is."""


Effect = Apply | Propose | Unchanged


def staff_vouched(entry: Entry) -> bool:
    return entry.status is Status.VALIDATED or entry.source in _STAFF_SOURCES


def feedback_effect(entry: Entry, feedback: ClientFeedback) -> Effect:
    """What a client's feedback does to an entry: see the rule in this module's docstring."""
    corrected = feedback.corrected
    if corrected is not None:
        if not corrected.strip():
            raise InvalidRequest("the corrected answer must not be empty", code="empty_answer")
        if corrected.strip() != entry.answer.strip():
            return Propose(ProposalKind.CORRECT, corrected)
        # "Corrected" to what it already says: that is a yes.
    if feedback.validated or corrected is not None:
        if entry.status is Status.VALIDATED:
            return Unchanged()
        return Propose(ProposalKind.VALIDATE)
    if entry.status is Status.OBSOLETE:
        return Unchanged()
    if staff_vouched(entry):
        return Propose(ProposalKind.RETIRE)
    return Apply({"status": Status.OBSOLETE})


@dataclass(frozen=True, slots=True)
class Proposal:
    id: int
    tenant: str
    entry_id: int
    conversation_id: str
    message_id: int
    kind: ProposalKind
    proposed_answer: str | None
    # The entry as the client saw it when proposing: accepting checks it has not changed since.
    base_question: str
    base_answer: str
    base_status: Status
    proposed_by: str
    created_at: datetime
    status: ProposalStatus = ProposalStatus.PENDING
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str | None = None
    audit_event_id: int | None = None
    # The entry as it is now (None once deleted), for staff to compare.
    current: Entry | None = None

    @property
    def entry_changed(self) -> bool:
        """Whether the entry's question, answer or status moved since the proposal was made."""
        now = self.current
        if now is None:
            return True
        return (now.question, now.answer, now.status) != (
            self.base_question,
            self.base_answer,
            self.base_status,
        )

    def to_public(self) -> dict[str, Any]:
        now = self.current
        return {
            "id": self.id,
            "entry_id": self.entry_id,
            "conversation_id": self.conversation_id,
            "message_id": self.message_id,
            "kind": self.kind.value,
            "proposed_answer": self.proposed_answer,
            "base_answer": self.base_answer,
            "base_status": self.base_status.value,
            "proposed_by": self.proposed_by,
            **describe_actor(self.proposed_by, "proposed_by"),
            "created_at": to_text(self.created_at),
            "status": self.status.value,
            "decided_by": self.decided_by,
            **describe_actor(self.decided_by, "decided_by"),
            "decided_at": to_text(self.decided_at) if self.decided_at else None,
            "reason": self.reason,
            "audit_event_id": self.audit_event_id,
            "entry": (
                None
                if now is None
                else {"question": now.question, "answer": now.answer, "status": now.status.value}
            ),
            "entry_changed": self.entry_changed,
        }


def accepted_change(proposal: Proposal, current: Entry | None, force: bool) -> tuple[Action, dict[str, Any]]:
    """The audit action and the columns that accepting `proposal` writes to `current`.

    Refuses a decided proposal, a deleted entry, and (unless `force`) an entry that changed since
    the client saw it: staff accept what they were shown, not what it has become."""
    if proposal.status is not ProposalStatus.PENDING:
        raise Conflict(f"proposal {proposal.id} was already {proposal.status.value}", code="proposal_decided")
    if current is None:
        raise Conflict(
            f"entry {proposal.entry_id} no longer exists; reject the proposal", code="entry_deleted"
        )
    if not force and proposal.entry_changed:
        error = Conflict(
            f"entry {current.id} changed since the proposal was made; accept with force to apply "
            "it anyway, or reject it",
            code="entry_changed",
        )
        error.extra["current"] = {
            "question": current.question,
            "answer": current.answer,
            "status": current.status.value,
        }
        raise error
    if proposal.kind is ProposalKind.RETIRE:
        return Action.OBSOLETE, {"status": Status.OBSOLETE}
    if proposal.kind is ProposalKind.VALIDATE:
        return Action.VALIDATE, {"status": Status.VALIDATED}
    assert proposal.proposed_answer is not None
    fields: dict[str, Any] = {"answer": proposal.proposed_answer, "status": Status.VALIDATED}
    # A learned answer that staff replaced is the staff's answer from then on (as with an edit).
    if current.source is Source.LEARNED:
        fields["source"] = Source.STAFF
    return Action.EDIT, fields


@dataclass(frozen=True, slots=True)
class FeedbackResult:
    entry: Entry
    outcome: Outcome
    proposal_id: int | None = None
    # The variant the answer was served through, and what the feedback did to it
    # (memory/variant_feedback.py): confirmed, removed or unchanged.
    variant: tuple[int, str] | None = None

    def to_public(self) -> dict[str, Any]:
        return {
            "entry_id": self.entry.id,
            "status": self.entry.status.value,
            "outcome": self.outcome,
            "proposal_id": self.proposal_id,
            "variant": None if self.variant is None else {"id": self.variant[0], "outcome": self.variant[1]},
        }


class ProposalStore(Protocol):
    def atomic(self) -> AbstractAsyncContextManager[Any]:
        """An async context: the store calls inside it (entries' too) commit together or not at all."""
        ...

    async def add(self, proposal: Proposal) -> int:
        """Store a pending proposal; an identical pending one from the same message is reused."""
        ...

    async def get(self, tenant: str, proposal_id: int) -> Proposal | None: ...

    async def page(
        self, tenant: str, status: ProposalStatus | None, limit: int, before_id: int | None
    ) -> list[Proposal]:
        """Newest first; `before_id` is the cursor."""
        ...

    async def decide(
        self,
        tenant: str,
        proposal_id: int,
        status: ProposalStatus,
        by: str,
        now: datetime,
        reason: str | None = None,
    ) -> bool:
        """Mark a pending proposal decided (an accepted one linked to the audit event that names
        it); False when it was not pending any more."""
        ...
