"""When a verified candidate may be served with no LLM call."""

from __future__ import annotations

from dataclasses import dataclass

from memory_guard.core.verdict import Verdict, Verification


@dataclass(frozen=True, slots=True)
class ServePolicy:
    direct: float  # lowest score served on the offline verifier's plain yes
    verified_direct: float  # lowest score served on a confident yes (classifier or LLM judge)
    confident: float  # classifier probability that makes a yes confident

    def confident_yes(self, verification: Verification) -> bool:
        if verification.verdict is not Verdict.ACCEPT:
            return False
        if verification.by == "judge":
            return True
        return verification.probability is not None and verification.probability >= self.confident

    def serves(self, score: float, verification: Verification) -> bool:
        if verification.verdict is Verdict.EXACT:
            return True
        if verification.verdict is not Verdict.ACCEPT:
            return False
        return score >= self.direct or (self.confident_yes(verification) and score >= self.verified_direct)
