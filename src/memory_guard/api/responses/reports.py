"""The answers of the staff reports: the statistics and the served answers under review."""

from __future__ import annotations

from pydantic import Field

from memory_guard.api.responses.base import (
    ACTOR_CODE,
    ACTOR_PARAMS,
    MOMENT,
    REASON_CODE,
    REASON_PARAMS,
    ResponseModel,
)
from memory_guard.hits.store import Review


class EntryCounts(ResponseModel):
    auto: int
    validated: int
    obsolete: int
    total: int


class LookupTotals(ResponseModel):
    total: int
    direct: int
    assisted: int
    miss: int


class CostAvoided(ResponseModel):
    amount: float = Field(description="tokens_saved at the configured price: an estimate")
    currency: str
    price_per_1k_tokens: float


class Day(ResponseModel):
    day: str = Field(description="YYYY-MM-DD, UTC")
    direct: int
    assisted: int
    miss: int


class RaisedFloor(ResponseModel):
    """A scope whose reviews showed too many wrong answers: below `floor`, nothing is served there."""

    agent: str
    project: str
    phase: str
    floor: float
    reviewed: int
    wrong: int


class VariantHits(ResponseModel):
    total: int = Field(description="answers served through a question variant's wording")
    reviewed: int
    wrong: int
    wrong_rate: float | None = Field(description="wrong / reviewed; null before any review")
    wrong_rate_ci95: list[float] | None = Field(description="its Wilson 95% interval, [low, high]")


class ServedTotals(ResponseModel):
    total: int = Field(description="answers served from memory")
    exact: int
    verified: int = Field(description="served on the verifier's word (not exact)")
    by_verdict: dict[str, int]
    reviewed: int
    wrong: int
    wrong_rate: float | None = Field(description="wrong / reviewed; null before any review")
    wrong_rate_ci95: list[float] | None = Field(description="its Wilson 95% interval, [low, high]")
    raised_floors: list[RaisedFloor]
    through_variants: VariantHits = Field(
        description="the same figures, for the answers served through a variant"
    )


class JudgeCost(ResponseModel):
    enabled: bool = Field(description="whether the judge is asked now (MEMORY_JUDGE)")
    why: str = Field(description="why it is on or off")
    calls: int = Field(description="calls to the judge's model, with or without a verdict")
    failed: int = Field(description="calls that got no reply (an error, a timeout): tokens and cost unknown")
    prompt_tokens: int = Field(description="as the upstream reported them")
    completion_tokens: int
    cost: float | None = Field(
        description="the cost the upstream reported, else the tokens at MEMORY_JUDGE_PRICE_*_PER_MTOK; "
        "null when a call's cost is unknown"
    )
    currency: str = Field(description="MEMORY_PRICE_CURRENCY")


class Stats(ResponseModel):
    entries: EntryCounts = Field(description="entries per status")
    entries_by_source: dict[str, int] = Field(description="entries per source")
    lookups: LookupTotals
    hit_rate: float = Field(description="direct / total lookups")
    llm_calls_avoided: int
    tokens_saved: int
    cost_avoided: CostAvoided
    timeline: list[Day] = Field(description="one point per UTC day, today last")
    served: ServedTotals
    judge: JudgeCost = Field(description="what the LLM judge cost")


class ServedHit(ResponseModel):
    """An answer served from memory, with why it was served and what reviewers said."""

    lookup_id: int
    question: str | None
    entry_id: int | None
    entry_question: str | None = Field(description="the served entry's question as it is now")
    answer: str | None = Field(description="its answer as it is now; null once the entry is deleted")
    entry_changed: bool = Field(description="the entry was edited after it was served")
    score: float | None
    verdict: str | None
    reason: str | None
    reason_code: str | None = REASON_CODE
    reason_params: dict[str, str] = REASON_PARAMS
    verified_by: str | None
    review: Review | None
    reviewed_by: str | None
    reviewed_by_code: str | None = ACTOR_CODE
    reviewed_by_params: dict[str, str] = ACTOR_PARAMS
    created_at: str = Field(description=MOMENT)


class ServedHitPage(ResponseModel):
    items: list[ServedHit]
    next_cursor: str | None


class Reviewed(ResponseModel):
    lookup_id: int
    review: Review
