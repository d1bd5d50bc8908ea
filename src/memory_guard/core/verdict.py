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
    # The probability the verdict came from: the pair classifier's, or the cross-encoder's when
    # `by` is "cross_encoder" (it then replaces the classifier).
    probability: float | None = None
    by: str = "offline"  # or "cross_encoder", "judge", "exact"
    cross_encoder: float | None = None  # the cross-encoder's probability, when it read the pair

    def to_json(self) -> dict[str, object]:
        return {
            "verdict": self.verdict.value,
            "reason": self.reason,
            "probability": _rounded(self.probability),
            "cross_encoder_probability": _rounded(self.cross_encoder),
            "by": self.by,
            **describe_reason(self.reason),
        }


def _rounded(probability: float | None) -> float | None:
    return None if probability is None else round(probability, 4)


EXACT = Verification(Verdict.EXACT, "same question", 1.0, by="exact")
