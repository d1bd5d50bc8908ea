"""The offline hit verifier: does the stored answer serve the incoming question?

Cosine similarity only proposes a candidate. The checks of `features` reject it when they
prove the questions differ (numbers, negation, opposite words, a key term swapped, another
kind of answer); otherwise the learned classifier gives the probability that the answer
serves, and that probability becomes a verdict. Runs in well under a millisecond, offline.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from memory_guard.verify.features import compare
from memory_guard.verify.model import PairModel


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
        }


EXACT = Verification(Verdict.EXACT, "same question", 1.0, by="exact")


@dataclass(frozen=True, slots=True)
class Cutoffs:
    """Probabilities of the classifier that make a verdict."""

    accept: float
    reject: float


class OfflineVerifier:
    def __init__(self, model: PairModel | None, cutoffs: Cutoffs) -> None:
        # No model (an embedder it was not trained for): the checks alone decide.
        self.model = model
        self.cutoffs = cutoffs

    def verify(self, stored: str, incoming: str, similarity: float) -> Verification:
        comparison = compare(stored, incoming, similarity)
        conflict = comparison.conflict
        if conflict:
            return Verification(Verdict.REJECT, conflict, 0.0)
        if self.model is None:
            return Verification(Verdict.ACCEPT, "no difference found (checks only)")
        p = self.model.probability(comparison.vector)
        if p >= self.cutoffs.accept:
            return Verification(Verdict.ACCEPT, f"same question (p={p:.2f})", p)
        if p < self.cutoffs.reject:
            return Verification(Verdict.REJECT, f"likely another question (p={p:.2f})", p)
        return Verification(Verdict.UNSURE, f"unsure (p={p:.2f})", p)
