"""The audit trail: who changed which entry, when, and what it was before and after.

Each event is written in the same transaction as the change it records, so the trail
never claims a change that did not happen nor misses one that did.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from memory_guard.core.actor import describe_actor
from memory_guard.core.clock import from_text, to_text
from memory_guard.memory.entry import Source, Status


class Action(StrEnum):
    CREATE = "create"
    EDIT = "edit"
    VALIDATE = "validate"
    OBSOLETE = "obsolete"
    DELETE = "delete"
    PRUNE = "prune"
    IMPORT = "import"
    FEEDBACK = "feedback"
    RESTORE = "restore"
    # An edit that changed nothing a reader sees (a learned answer refreshed into the same text, a
    # patch giving the values already there): only the entry's age, and its provenance, renewed.
    REFRESH = "refresh"
    # A question variant's changes: the event's `before`/`after` are the variant's, not the entry's.
    ADD_VARIANT = "add_variant"
    REMOVE_VARIANT = "remove_variant"
    VALIDATE_VARIANT = "validate_variant"
    # A learned variant confirmed once more by an independent voice: the judge's yes, a client's yes.
    CONFIRM_VARIANT = "confirm_variant"
    # A learned variant removed because a client said an answer served through it was wrong.
    REJECT_VARIANT = "reject_variant"


VARIANT_ACTIONS = frozenset(
    {
        Action.ADD_VARIANT,
        Action.REMOVE_VARIANT,
        Action.VALIDATE_VARIANT,
        Action.CONFIRM_VARIANT,
        Action.REJECT_VARIANT,
    }
)


@dataclass(frozen=True, slots=True)
class Change:
    """Who makes a change and what kind it is; stores record it next to the change itself."""

    actor: str
    action: Action
    proposal_id: int | None = None  # the client proposal that staff accepted, when it is one


# The fields whose change is an edit: what the entry says and where and how long it is served.
CONTENT_FIELDS = ("question", "answer", "status", "source", "agent", "project", "phase", "tags", "expires_at")

# What an event keeps of an entry: everything but its vector, which the question determines.
SNAPSHOT_FIELDS = (
    "question",
    "answer",
    "status",
    "source",
    "agent",
    "project",
    "phase",
    "tags",
    "metadata",
    "usage_count",
    "created_at",
    "updated_at",
    "last_used_at",
    "expires_at",
    "embedding_model",
)


@dataclass(frozen=True, slots=True)
class AuditEvent:
    id: int
    entry_id: int
    at: datetime
    actor: str
    action: Action
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    proposal_id: int | None = None

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "entry_id": self.entry_id,
            "at": to_text(self.at),
            "actor": self.actor,
            **describe_actor(self.actor),
            "action": self.action.value,
            "before": self.before,
            "after": self.after,
            "proposal_id": self.proposal_id,
        }


def restorable(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The columns a restore writes back from a snapshot; counters and dates stay as they are."""
    expiry = snapshot["expires_at"]
    return {
        "question": snapshot["question"],
        "answer": snapshot["answer"],
        "status": Status(snapshot["status"]),
        "source": Source(snapshot["source"]),
        "tags": list(snapshot["tags"]),
        "metadata": dict(snapshot["metadata"]),
        "expires_at": from_text(expiry) if expiry else None,
    }
