"""The serve policy: every threshold, and the rule that turns candidates into a decision.

A lookup's candidates are the stored questions nearest to the one asked, best score first.
The first candidate that `serves` is answered `direct` (no LLM call); otherwise the candidates
at or above `similar` that no verifier rejected ground the LLM (`assisted`); otherwise the lookup
is a `miss`. The guard, the staff lookup, the chat turn and the quality bench all decide through
this one object.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from memory_guard.core.decision import Decision
from memory_guard.core.verdict import Verdict, Verification


class Scored(Protocol):
    """What the rule reads of a candidate."""

    @property
    def score(self) -> float: ...  # cosine similarity; 1.0 for an exact match

    @property
    def exact(self) -> bool: ...  # same normalized question

    @property
    def verification(self) -> Verification | None: ...  # None when the verifier did not look


C = TypeVar("C", bound=Scored)


@dataclass(frozen=True, slots=True)
class ServePolicy:
    similar: float  # lowest score of a candidate: given to the LLM as grounding, or served
    direct: float  # lowest score served on the offline verifier's plain yes (or with no verifier)
    verified_direct: float  # lowest score served on a confident yes (a model's or the LLM judge's)
    # The probability that makes a yes confident: the cross-encoder's direct cut-off when it runs
    # (its every yes is confident), else the pair classifier's confident cut-off.
    confident: float

    def __post_init__(self) -> None:
        # A candidate below `similar` is never served: the direct floors cannot sit under it.
        if self.direct < self.similar or self.verified_direct < self.similar:
            raise ValueError(
                f"direct floors ({self.direct}, {self.verified_direct}) below the similarity "
                f"threshold {self.similar}"
            )

    def confident_yes(self, verification: Verification) -> bool:
        if verification.verdict is not Verdict.ACCEPT:
            return False
        if verification.by == "judge":
            return True
        return verification.probability is not None and verification.probability >= self.confident

    def serves(self, candidate: Scored, scope_floor: float = 0.0) -> bool:
        """Whether the candidate's stored answer may be served as is.

        `scope_floor`: the lowest score the scope's reviewed answers vouch for (0 when none); it
        binds every candidate but an exact match. With no verdict the score alone decides.
        """
        if candidate.score < self.similar:
            return False
        if candidate.exact:
            return True
        if candidate.score < scope_floor:
            return False
        verification = candidate.verification
        if verification is None:
            return candidate.score >= self.direct
        if verification.verdict is Verdict.EXACT:
            return True
        if verification.verdict is not Verdict.ACCEPT:
            return False
        if candidate.score >= self.direct:
            return True
        return self.confident_yes(verification) and candidate.score >= self.verified_direct

    def verify_from(self, scope_floor: float = 0.0) -> float:
        """The lowest score at which a verdict can make a candidate serve: below it, none is needed."""
        return max(min(self.direct, self.verified_direct), scope_floor)

    def grounding(self, candidates: Sequence[C]) -> list[C]:
        """The candidates given to the LLM as grounding: close enough, and not read as another
        question by a verifier. A rejected one is the near miss a fallible LLM reuses wrongly
        (bench/replay.py: most of its wrong reuses were of candidates the cross-encoder or the
        judge had turned down), and a stored answer to another question is no help to its own."""
        return [
            c
            for c in candidates
            if c.score >= self.similar
            and (c.verification is None or c.verification.verdict is not Verdict.REJECT)
        ]

    def decide(
        self,
        candidates: Sequence[C],
        allow_direct: bool,
        scope_floor: float = 0.0,
        held: Callable[[C], bool] = lambda candidate: False,
    ) -> tuple[Decision, C | None]:
        """The decision for candidates ordered best score first, and the candidate served direct.

        A better-scored candidate that does not serve is passed over for the first one that does,
        unless the verifier was unsure of it: that one may well be the question asked (a model
        that reads a near-copy badly says unsure), and a lower candidate that serves is then more
        likely a sibling question that differs by a detail ("…delivered last week" / "…with a
        gift card"). `allow_direct` False (a question that needs the conversation) never answers
        direct. A `held` candidate (one whose matched wording may not be served yet, see
        memory/variant_policy.py) is never served and, like an unsure one, stops the walk.
        """
        if not self.grounding(candidates):
            return Decision.MISS, None
        if allow_direct:
            for candidate in candidates:
                if held(candidate):
                    break
                if self.serves(candidate, scope_floor):
                    return Decision.DIRECT, candidate
                if candidate.verification is not None and candidate.verification.verdict is Verdict.UNSURE:
                    break
        return Decision.ASSISTED, None
