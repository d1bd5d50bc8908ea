"""Which local verdicts the LLM judge reads (verify/judge_reads.py), one case per rule."""

from __future__ import annotations

import pytest

from memory_guard.core.verdict import EXACT, Verdict, Verification
from memory_guard.verify.judge_reads import JudgeReads, judge_reads
from memory_guard.verify.verifier import SAME_ONCE_POLITE

EVERY, UNSURE_ONLY = JudgeReads.EVERY_HIT, JudgeReads.UNSURE

CE_YES = Verification(Verdict.ACCEPT, "cross-encoder: same question (p=0.99)", 0.99, by="cross_encoder")
CE_UNSURE = Verification(Verdict.UNSURE, "cross-encoder: unsure (p=0.6)", 0.6, by="cross_encoder")
CE_NO = Verification(
    Verdict.REJECT, "cross-encoder: likely another question (p=0.02)", 0.02, by="cross_encoder"
)
CHECKS_YES = Verification(Verdict.ACCEPT, "no difference found (checks only)", None)
JUDGE_YES = Verification(Verdict.ACCEPT, "judge: same question", None, by="judge")


def veto(reason: str) -> Verification:
    return Verification(Verdict.REJECT, reason, None)


@pytest.mark.parametrize("reads", [EVERY, UNSURE_ONLY])
def test_an_unsure_candidate_is_read_either_way(reads: JudgeReads) -> None:
    assert judge_reads(CE_UNSURE, reads)


def test_a_local_yes_is_read_on_every_hit_only() -> None:
    for yes in (CE_YES, CHECKS_YES):
        assert judge_reads(yes, EVERY)
        assert not judge_reads(yes, UNSURE_ONLY)


@pytest.mark.parametrize(
    "reason",
    [
        "asks for another kind of answer: how vs when",
        "negation in one question only",
        "word order differs: laptop … best vs best … laptop",
    ],
)
def test_a_surface_veto_is_read_on_every_hit_only(reason: str) -> None:
    assert judge_reads(veto(reason), EVERY)
    assert not judge_reads(veto(reason), UNSURE_ONLY)


@pytest.mark.parametrize(
    "reason",
    [
        "numbers differ: 2 vs 3",
        "opposite meaning: approve vs reject",
        "key term differs: maroc vs france",
    ],
)
def test_a_value_veto_is_never_read(reason: str) -> None:
    assert not judge_reads(veto(reason), EVERY)


def test_a_models_no_is_never_read() -> None:
    assert not judge_reads(CE_NO, EVERY)


@pytest.mark.parametrize("verification", [EXACT, SAME_ONCE_POLITE, JUDGE_YES, None])
def test_what_needs_no_model_or_was_judged_is_never_read(verification: Verification | None) -> None:
    assert not judge_reads(verification, EVERY)
