"""The answers of the staff routes over entries: an entry, a page of them, a lookup, an entry's usage."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from pydantic import Field

from memory_guard.api.responses.base import MOMENT, REASON_CODE, REASON_PARAMS, ResponseModel
from memory_guard.core.decision import Decision
from memory_guard.core.verdict import Verdict
from memory_guard.memory.entry import Entry, Source, Status
from memory_guard.memory.variant import Variant, VariantOrigin, VariantStatus


class EntryOut(ResponseModel):
    """A memory entry (docs/API.md, "Memory entries")."""

    id: int
    question: str
    answer: str
    status: Status
    source: Source
    agent: str
    project: str
    phase: str
    tags: list[str]
    usage_count: int = Field(description="how many times it was served or given as grounding")
    created_at: str = Field(description=MOMENT)
    updated_at: str = Field(description=MOMENT)
    last_used_at: str | None = Field(description=MOMENT)
    expires_at: str = Field(description=f"{MOMENT}: when it stops being served (age limit or explicit)")
    embedding_model: str | None
    metadata: dict[str, Any]

    @classmethod
    def of(cls, entry: Entry, max_age: timedelta) -> EntryOut:
        return cls.model_validate(entry.to_public(max_age))


class VariantOut(ResponseModel):
    """A question variant: another wording of its entry's question (docs/API.md, "Question variants")."""

    id: int
    entry_id: int
    question: str
    status: VariantStatus = Field(description="validated (vouched for) or learned (recorded by the service)")
    origin: VariantOrigin = Field(description="who or what added it")
    confirmations: int = Field(description="the independent confirmations of the wording so far")
    created_at: str = Field(description=MOMENT)
    created_by: str
    updated_at: str = Field(description=MOMENT)
    embedding_model: str | None

    @classmethod
    def of(cls, variant: Variant) -> VariantOut:
        return cls.model_validate(variant.to_public())


class VariantList(ResponseModel):
    items: list[VariantOut] = Field(description="the entry's variants, oldest first")


class EntryDetail(EntryOut):
    variants: list[VariantOut] = Field(
        default_factory=list,
        exclude_if=lambda variants: not variants,
        description="its question variants, oldest first: only when it has some",
    )


class ListedEntry(EntryOut):
    score: float | None = Field(
        default=None,
        exclude_if=lambda score: score is None,
        description="its similarity to `query`: only in the results of a semantic search",
    )


class EntryPage(ResponseModel):
    items: list[ListedEntry]
    next_cursor: str | None = Field(description="pass it as `cursor` for the next page; null on the last")


class Removed(ResponseModel):
    removed: int = Field(description="the expired entries deleted")


class MatchedVariant(ResponseModel):
    id: int
    status: VariantStatus
    confirmations: int
    held: bool = Field(
        description="true when the wording may not be served yet (a learned variant not confirmed): "
        "its entry only grounds the LLM"
    )


class _Candidate(ResponseModel):
    entry_id: int
    score: float
    matched_question: str = Field(description="the wording that matched: the entry's question or a variant")
    exact: bool = Field(description="the same question once normalized")
    served: bool = Field(description="the entry a `direct` decision serves")
    variant: MatchedVariant | None = Field(
        default=None,
        exclude_if=lambda variant: variant is None,
        description="the variant whose wording matched: only when one did",
    )


class VerifiedCandidate(_Candidate):
    verdict: Verdict
    reason: str = Field(description="the verifier's reason, in English")
    probability: float | None = Field(
        description="the probability the verdict came from: the cross-encoder's when `by` is "
        "cross_encoder, else the pair classifier's; null when neither ran"
    )
    cross_encoder_probability: float | None = Field(
        description="the cross-encoder's probability that the stored answer serves the question; null "
        "when it did not read the pair (off, rejected by the checks first, or past its best 3)"
    )
    by: Literal["offline", "cross_encoder", "judge", "exact"]
    reason_code: str | None = REASON_CODE
    reason_params: dict[str, str] = REASON_PARAMS


class UnverifiedCandidate(_Candidate):
    """A candidate the verifier did not look at: MEMORY_VERIFIER=off, or too far to be served."""

    verdict: None
    reason: Literal["verifier off"]
    cross_encoder_probability: None = Field(description="always null: nothing read the pair")
    reason_code: str | None = REASON_CODE
    reason_params: dict[str, str] = REASON_PARAMS


class LookupOut(ResponseModel):
    """What the guard would do with a question, without answering it or logging it."""

    decision: Decision
    served_entry_id: int | None
    scope_floor: float | None = Field(description="the floor that reviews raised in this scope, if any")
    candidates: list[VerifiedCandidate | UnverifiedCandidate]


class LookupCounts(ResponseModel):
    direct: int
    assisted: int


class RecentUse(ResponseModel):
    lookup_id: int
    at: str = Field(description=MOMENT)
    decision: Literal["direct", "assisted"]
    role: Literal["served", "grounding"]
    score: float | None
    question: str | None


class VariantUsage(ResponseModel):
    direct: int
    reviewed: int
    wrong: int


class EntryUsage(ResponseModel):
    entry_id: int
    usage_count: int
    last_used_at: str | None = Field(description=MOMENT)
    lookups: LookupCounts = Field(description="the lookups it answered (direct) or grounded (assisted)")
    recent: list[RecentUse] = Field(description="the latest of them, newest first")
    variant_hits: VariantUsage = Field(description="its direct answers served through one of its variants")
