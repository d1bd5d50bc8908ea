"""The verifier's answer about one candidate: does its stored answer serve the question?"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from memory_guard.core.verdict_reasons import describe_reason


class Verdict(StrEnum):
    EXACT = "exact"  # same normalized question: nothing to verify
    ACCEPT = "accept"
    UNSURE = "unsure"
    REJECT = "reject"


@dataclass(frozen=True, slots=True)
class Verification:
    verdict: Verdict
    reason: str
    probability: float | None = None
    by: str = "offline"  # or "judge", "exact"

    def to_json(self) -> dict[str, object]:
        return {
            "verdict": self.verdict.value,
            "reason": self.reason,
            "probability": None if self.probability is None else round(self.probability, 4),
            "by": self.by,
            **describe_reason(self.reason),
        }


EXACT = Verification(Verdict.EXACT, "same question", 1.0, by="exact")
