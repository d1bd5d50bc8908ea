"""The serve policy, boundary by boundary: every comparison and branch of the rule that turns
candidates and verdicts into direct / assisted / miss is pinned by a case that changes outcome
when the comparison is flipped or the branch dropped."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

from memory_guard.core.decision import Decision
from memory_guard.core.serve_policy import ServePolicy
from memory_guard.core.verdict import EXACT, Verdict, Verification

SIMILAR, DIRECT, VERIFIED_DIRECT, CONFIDENT = 0.85, 0.95, 0.90, 0.95
POLICY = ServePolicy(similar=SIMILAR, direct=DIRECT, verified_direct=VERIFIED_DIRECT, confident=CONFIDENT)


def below(value: float) -> float:
    return math.nextafter(value, -math.inf)


def above(value: float) -> float:
    return math.nextafter(value, math.inf)


@dataclass(frozen=True, slots=True)
class Cand:
    score: float
    exact: bool = False
    verification: Verification | None = None


def accept(probability: float | None = 0.8, by: str = "offline") -> Verification:
    return Verification(Verdict.ACCEPT, "classifier", probability, by=by)


UNSURE = Verification(Verdict.UNSURE, "classifier", 0.5)
REJECT = Verification(Verdict.REJECT, "number differs", 0.01)
JUDGE_YES = Verification(Verdict.ACCEPT, "judge", None, by="judge")


# ------------------------------------------------------------------ serves


def test_a_plain_yes_serves_from_the_direct_threshold_on() -> None:
    assert POLICY.serves(Cand(DIRECT, verification=accept()))
    assert not POLICY.serves(Cand(below(DIRECT), verification=accept()))


def test_a_confident_yes_serves_from_the_verified_direct_threshold_on() -> None:
    assert POLICY.serves(Cand(VERIFIED_DIRECT, verification=accept(CONFIDENT)))
    assert not POLICY.serves(Cand(below(VERIFIED_DIRECT), verification=accept(1.0)))


def test_a_yes_is_confident_from_the_confident_probability_on() -> None:
    assert POLICY.serves(Cand(0.92, verification=accept(CONFIDENT)))
    assert not POLICY.serves(Cand(0.92, verification=accept(below(CONFIDENT))))


def test_a_yes_without_probability_is_plain_unless_the_judge_said_it() -> None:
    assert not POLICY.serves(Cand(0.92, verification=accept(None)))
    assert POLICY.serves(Cand(0.92, verification=accept(None, by="judge")))
    assert POLICY.serves(Cand(VERIFIED_DIRECT, verification=JUDGE_YES))
    assert not POLICY.serves(Cand(below(VERIFIED_DIRECT), verification=JUDGE_YES))


def test_confident_yes_needs_an_accept() -> None:
    assert POLICY.confident_yes(accept(CONFIDENT))
    assert POLICY.confident_yes(JUDGE_YES)
    assert not POLICY.confident_yes(Verification(Verdict.UNSURE, "judge", None, by="judge"))
    assert not POLICY.confident_yes(Verification(Verdict.REJECT, "classifier", 1.0))
    assert not POLICY.confident_yes(accept(None))
    assert not POLICY.confident_yes(accept(below(CONFIDENT)))


@pytest.mark.parametrize("verification", [UNSURE, REJECT], ids=["unsure", "reject"])
def test_no_yes_never_serves_whatever_the_score(verification: Verification) -> None:
    assert not POLICY.serves(Cand(1.0, verification=verification))


def test_an_exact_verdict_serves_at_any_candidate_score() -> None:
    assert POLICY.serves(Cand(SIMILAR, verification=EXACT))


def test_with_no_verdict_the_score_alone_decides() -> None:
    assert POLICY.serves(Cand(DIRECT))
    assert not POLICY.serves(Cand(below(DIRECT)))


def test_an_exact_match_serves_with_no_verdict_and_over_any_scope_floor() -> None:
    assert POLICY.serves(Cand(0.9, exact=True))
    assert POLICY.serves(Cand(1.0, exact=True, verification=EXACT), scope_floor=above(1.0))


def test_the_scope_floor_binds_every_other_candidate() -> None:
    candidate = Cand(0.97, verification=accept())
    assert POLICY.serves(candidate, scope_floor=0.97)
    assert not POLICY.serves(candidate, scope_floor=above(0.97))
    assert not POLICY.serves(Cand(0.97, verification=EXACT), scope_floor=above(0.97))
    assert POLICY.serves(candidate)  # no floor by default


def test_nothing_below_the_similarity_threshold_serves() -> None:
    flat = ServePolicy(similar=0.9, direct=0.9, verified_direct=0.9, confident=CONFIDENT)
    assert flat.serves(Cand(0.9))
    assert not POLICY.serves(Cand(below(SIMILAR), verification=EXACT))
    assert not POLICY.serves(Cand(below(SIMILAR), exact=True))


# ------------------------------------------------------------------ decide


def test_no_candidate_is_a_miss() -> None:
    assert POLICY.decide([], allow_direct=True) == (Decision.MISS, None)


def test_a_best_candidate_below_similar_is_a_miss() -> None:
    assert POLICY.decide([Cand(below(SIMILAR))], allow_direct=True) == (Decision.MISS, None)


def test_a_candidate_at_similar_that_does_not_serve_grounds_the_llm() -> None:
    assert POLICY.decide([Cand(SIMILAR)], allow_direct=True) == (Decision.ASSISTED, None)


def test_a_rejected_candidate_grounds_nothing() -> None:
    candidates = [Cand(0.9, verification=REJECT), Cand(0.5)]
    assert POLICY.grounding(candidates) == []
    assert POLICY.decide(candidates, allow_direct=True) == (Decision.MISS, None)


def test_the_candidates_no_verifier_rejected_ground_the_llm() -> None:
    candidates = [Cand(0.95, verification=REJECT), Cand(0.9, verification=UNSURE), Cand(SIMILAR)]
    assert POLICY.grounding(candidates) == candidates[1:]
    assert POLICY.decide(candidates, allow_direct=True) == (Decision.ASSISTED, None)


def test_a_serving_candidate_is_served_direct() -> None:
    candidate = Cand(DIRECT, verification=accept())
    decision, served = POLICY.decide([candidate], allow_direct=True)
    assert decision is Decision.DIRECT and served is candidate


def test_allow_direct_false_only_grounds() -> None:
    candidates = [Cand(1.0, exact=True, verification=EXACT)]
    assert POLICY.decide(candidates, allow_direct=False) == (Decision.ASSISTED, None)


def test_the_first_serving_candidate_wins_over_a_better_scored_one_that_does_not() -> None:
    refused, confident, plain = (
        Cand(0.99, verification=REJECT),
        Cand(0.92, verification=accept(0.97)),
        Cand(0.91, verification=accept(0.99)),
    )
    decision, served = POLICY.decide([refused, confident, plain], allow_direct=True)
    assert decision is Decision.DIRECT and served is confident


def test_an_unsure_better_candidate_is_not_passed_over_for_a_lower_one() -> None:
    # Measured: "Quick question: <stored question>" read unsure, and its sibling "<... with a gift
    # card>" read yes just below it was served, another question's answer.
    unsure, sibling = Cand(0.99, verification=UNSURE), Cand(0.97, verification=accept(0.99))
    assert POLICY.decide([unsure, sibling], allow_direct=True) == (Decision.ASSISTED, None)
    # A no or a yes under its floor is still passed over.
    plain = Cand(0.93, verification=accept(0.5))
    for better in (Cand(0.99, verification=REJECT), plain):
        decision, served = POLICY.decide([better, sibling], allow_direct=True)
        assert decision is Decision.DIRECT and served is sibling


def test_a_candidate_below_similar_is_never_served_after_a_refused_one() -> None:
    candidates = [Cand(0.9, verification=REJECT), Cand(below(SIMILAR), verification=EXACT)]
    assert POLICY.decide(candidates, allow_direct=True) == (Decision.MISS, None)


def test_decide_applies_the_scope_floor() -> None:
    candidates = [Cand(0.93, verification=accept(0.99))]
    assert POLICY.decide(candidates, allow_direct=True, scope_floor=above(0.93)) == (Decision.ASSISTED, None)
    assert POLICY.decide(candidates, allow_direct=True, scope_floor=0.93)[0] is Decision.DIRECT
    assert POLICY.decide(candidates, allow_direct=True)[0] is Decision.DIRECT


# ------------------------------------------------------------------ floors and grounding


def test_verification_matters_from_the_lower_direct_floor_or_the_scope_floor() -> None:
    assert POLICY.verify_from() == VERIFIED_DIRECT
    assert POLICY.verify_from(0.5) == VERIFIED_DIRECT
    assert POLICY.verify_from(0.93) == 0.93
    swapped = ServePolicy(similar=SIMILAR, direct=0.9, verified_direct=0.95, confident=CONFIDENT)
    assert swapped.verify_from() == 0.9


def test_grounding_keeps_the_candidates_from_similar_on_in_order() -> None:
    candidates = [Cand(0.9), Cand(SIMILAR), Cand(below(SIMILAR)), Cand(0.2)]
    assert POLICY.grounding(candidates) == candidates[:2]


# ------------------------------------------------------------------ consistency


def test_direct_floors_below_similar_are_refused() -> None:
    ServePolicy(similar=0.9, direct=0.9, verified_direct=0.9, confident=CONFIDENT)
    with pytest.raises(ValueError, match="below the similarity threshold"):
        ServePolicy(similar=0.9, direct=below(0.9), verified_direct=0.95, confident=CONFIDENT)
    with pytest.raises(ValueError, match="below the similarity threshold"):
        ServePolicy(similar=0.9, direct=0.95, verified_direct=below(0.9), confident=CONFIDENT)
