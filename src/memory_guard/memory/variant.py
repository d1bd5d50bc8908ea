"""Question variants: other wordings of an entry's question, each matched like the question itself.

A variant has no scope, status or expiry of its own for serving: it inherits its entry's (see
`variant_policy.py` for when a variant's match may be served). Its own `status` says how far its
wording is vouched for: `validated` (staff wrote or confirmed it) or `learned` (the service
recorded it, e.g. an LLM reusing the entry for this wording), and `confirmations` counts the
independent confirmations a learned wording has had.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from memory_guard.core.clock import to_text
from memory_guard.core.errors import Conflict, InvalidRequest, NotFound
from memory_guard.core.scope import Scope
from memory_guard.embeddings.base import Vectors
from memory_guard.memory.audit import Change
from memory_guard.memory.entry import Entry

# More wordings than this for one question is a sign of a mistake (or of a runaway learner).
MAX_VARIANTS = 100


class VariantStatus(StrEnum):
    VALIDATED = "validated"
    LEARNED = "learned"


class VariantOrigin(StrEnum):
    """Who or what added the wording."""

    STAFF = "staff"
    LLM = "llm"  # the LLM reused the entry to answer this wording
    JUDGE = "judge"
    FEEDBACK = "feedback"


@dataclass(frozen=True, slots=True)
class Variant:
    id: int
    entry_id: int
    question: str
    key_hash: str
    status: VariantStatus
    origin: VariantOrigin
    confirmations: int
    created_at: datetime
    created_by: str
    updated_at: datetime
    embedding_model: str | None = None

    def to_public(self) -> dict[str, Any]:
        """The variant as docs/API.md lists its fields."""
        return {
            "id": self.id,
            "entry_id": self.entry_id,
            "question": self.question,
            "status": self.status.value,
            "origin": self.origin.value,
            "confirmations": self.confirmations,
            "created_at": to_text(self.created_at),
            "created_by": self.created_by,
            "updated_at": to_text(self.updated_at),
            "embedding_model": self.embedding_model,
        }

    def snapshot(self) -> dict[str, Any]:
        """What an audit event keeps of a variant (its vector follows from its wording)."""
        return {
            "variant_id": self.id,
            "question": self.question,
            "status": self.status.value,
            "origin": self.origin.value,
            "confirmations": self.confirmations,
        }


@dataclass(frozen=True, slots=True)
class NewVariant:
    question: str
    key_hash: str  # made in its entry's scope
    status: VariantStatus
    origin: VariantOrigin
    confirmations: int
    vector: Vectors | None
    embedding_model: str | None
    created_by: str


@dataclass(frozen=True, slots=True)
class VariantIndexRow:
    """What the similarity index needs of a variant: its vector, and its entry's scope and dates."""

    entry_id: int
    variant_id: int
    scope: Scope
    embedding: bytes  # float32, little-endian
    created: float  # the entry's, POSIX seconds
    expires: float  # the entry's, POSIX seconds


def variant_not_found(variant_id: int) -> NotFound:
    return NotFound(f"no variant {variant_id} of this entry", code="variant_not_found")


class VariantIsQuestion(InvalidRequest):
    code = "variant_is_question"

    def __init__(self, entry_id: int) -> None:
        super().__init__(
            f"this wording is entry {entry_id}'s own question (once case, accents, spacing and the "
            "closing mark are set aside): a variant must word it differently"
        )
        self.extra = {"entry_id": entry_id}


class DuplicateVariant(Conflict):
    """The wording is already held in the scope: by a variant of this entry, or by another live
    entry's question or variant (`entry_id` names it): one wording must lead to one answer."""

    code = "duplicate_variant"

    def __init__(self, entry_id: int, variant_id: int | None) -> None:
        where = f"variant {variant_id} of entry {entry_id}" if variant_id else f"entry {entry_id}'s question"
        super().__init__(f"this wording is already held in this scope, by {where}")
        self.extra = {"entry_id": entry_id, "variant_id": variant_id}


class TooManyVariants(Conflict):
    code = "too_many_variants"

    def __init__(self) -> None:
        super().__init__(f"an entry holds at most {MAX_VARIANTS} variants: remove one first")


@dataclass(frozen=True, slots=True)
class Holder:
    """A live entry holding a wording's key: by its question (`variant_id` None) or by a variant."""

    entry_id: int
    variant_id: int | None


class VariantStore(Protocol):
    """Every method taking a `tenant` reads or writes that tenant's variants only; the others serve
    loading the index and re-embedding, whose callers never take an id from a request."""

    async def find_wordings(self, tenant: str, key: str) -> list[tuple[Entry, Variant | None]]:
        """The entries whose question (variant None) or one of whose variants has this key: their
        own questions first, then newest first."""
        ...

    async def holders(self, tenant: str, keys: Sequence[str]) -> dict[str, list[Holder]]:
        """For each key held by live (not obsolete) entries, by their question or a variant: who."""
        ...

    async def of_entry(self, tenant: str, entry_id: int) -> list[Variant]: ...

    async def of_entries(self, tenant: str, entry_ids: Sequence[int]) -> dict[int, list[Variant]]: ...

    async def get_many(self, tenant: str, ids: Sequence[int]) -> dict[int, Variant]: ...

    async def add(
        self, tenant: str, entry_id: int, new: NewVariant, now: datetime, change: Change
    ) -> Variant | None:
        """Store it with its audit event, atomically; None when there is no such entry."""
        ...

    async def update(
        self, tenant: str, entry_id: int, variant_id: int, now: datetime, change: Change, **fields: Any
    ) -> Variant | None:
        """Set `status` or `confirmations`, audited; None when there is no such variant."""
        ...

    async def confirm(
        self, tenant: str, entry_id: int, variant_id: int, up_to: int, now: datetime, change: Change
    ) -> Variant | None:
        """One confirmation more for a `learned` variant that has fewer than `up_to`, audited; the
        variant as it is afterwards (unchanged otherwise), or None when there is no such variant."""
        ...

    async def delete(
        self, tenant: str, entry_id: int, variant_id: int, now: datetime, change: Change
    ) -> Variant | None:
        """Remove it with its audit event; the variant removed, or None when there was none."""
        ...

    async def vectors(self, entry_ids: Sequence[int], model_id: str) -> dict[int, list[tuple[int, Vectors]]]:
        """(variant id, vector) of these entries' variants embedded by `model_id`, by entry id."""
        ...

    def index_rows(self, model_id: str, max_age: timedelta) -> AsyncIterator[Sequence[VariantIndexRow]]:
        """The variants of every non-obsolete entry, embedded by `model_id`, batch by batch."""
        ...

    async def entries_to_reembed(self, model_id: str) -> list[int]:
        """The entries with a variant not embedded by `model_id`."""
        ...

    async def questions(self, entry_ids: Sequence[int]) -> list[tuple[int, str]]:
        """(variant id, wording) of these entries' variants."""
        ...

    async def set_vectors(self, vectors: Sequence[tuple[int, Vectors]], model_id: str) -> None: ...
