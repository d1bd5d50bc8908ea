"""The seam of the served-hit log: every direct answer, its verdict, and what people said of it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from memory_guard.core.actor import describe_actor
from memory_guard.core.scope import Scope
from memory_guard.core.verdict_reasons import describe_reason

Review = Literal["right", "wrong"]


@dataclass(frozen=True, slots=True)
class ServedHit:
    """One direct answer: the question asked, the entry served and why it was served."""

    lookup_id: int
    question: str | None
    entry_id: int | None
    score: float | None
    verdict: str | None
    reason: str | None
    verified_by: str | None
    review: Review | None
    reviewed_by: str | None
    created_at: str
    entry_question: str | None = None  # the served entry's question and answer as they are now
    answer: str | None = None  # None: the entry was deleted since
    entry_changed: bool = False  # the entry was edited after it was served

    def to_public(self) -> dict[str, Any]:
        return {
            "lookup_id": self.lookup_id,
            "question": self.question,
            "entry_id": self.entry_id,
            "entry_question": self.entry_question,
            "answer": self.answer,
            "entry_changed": self.entry_changed,
            "score": None if self.score is None else round(self.score, 4),
            "verdict": self.verdict,
            "reason": self.reason,
            **describe_reason(self.reason),
            "verified_by": self.verified_by,
            "review": self.review,
            "reviewed_by": self.reviewed_by,
            **describe_actor(self.reviewed_by, prefix="reviewed_by"),
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class ServedTotals:
    served: int
    exact: int
    reviewed: int
    wrong: int
    by_verdict: dict[str, int]
    # The answers served through a question variant's wording, apart: served, reviewed, wrong.
    variant_served: int = 0
    variant_reviewed: int = 0
    variant_wrong: int = 0


class HitStore(Protocol):
    async def review(self, tenant: str, lookup_id: int, review: Review, by: str, now: datetime) -> bool:
        """Record whether a served answer was right; False when no such served hit."""
        ...

    async def served_hits(
        self, tenant: str, review: Review | Literal["none"] | None, limit: int, before: int | None
    ) -> list[ServedHit]: ...

    async def served_totals(self, tenant: str) -> ServedTotals: ...

    async def reviewed_scores(self, scope: Scope | None = None) -> list[tuple[Scope, float, bool]]:
        """(scope, score, wrong) of every reviewed non-exact served answer, of one scope or all."""
        ...

    async def scope_of(self, tenant: str, lookup_id: int) -> Scope | None: ...
