"""Which candidates the LLM judge reads, when it is on: the one place that decides.

The local models propose, the judge disposes. Measured on bench/replay.py's stream (a fallible
scripted LLM, e5 and the cross-encoder), the cross-encoder's confident yes was wrong for about one
answer in eight among the close paraphrases it passes (many "How do I get rid of bad habits?" /
"…of fat?" pairs, whatever its probability), while the judge's verdicts were wrong only when the
script flipped them. So by default (`every_hit`) the judge reads every candidate that could be
served on a local model's word, its yes as much as its unsure; `unsure` keeps the older, faster
rule: the judge reads only what the local verifier leaves unsure.

`every_hit` also reads the candidates that one of the verifier's word checks turned down on a
surface cue (another question word, a negation, another word order): on the same stream, of the
candidates the judge then served, 111 were the question's need and 3 were not. The checks that
compare values (numbers, opposite terms, key terms such as a country or a party) and the models'
own no keep their veto: there a judge's slip serves the answer for another value (overruling the
key-term check served 49 right answers and 11 wrong ones).
"""

from __future__ import annotations

from enum import StrEnum

from memory_guard.core.verdict import Verdict, Verification
from memory_guard.core.verdict_reasons import describe_reason
from memory_guard.verify.verifier import SAME_ONCE_POLITE

# The word checks whose veto the judge may overrule (core/verdict_reasons.py codes).
SURFACE_CHECKS = frozenset({"kind_of_answer", "negation", "word_order"})


class JudgeReads(StrEnum):
    EVERY_HIT = "every_hit"
    UNSURE = "unsure"


def judge_reads(verification: Verification | None, reads: JudgeReads) -> bool:
    """Whether the judge is asked about a candidate with this local verdict."""
    if verification is None:
        return False
    if verification.verdict is Verdict.UNSURE:
        return True
    if reads is not JudgeReads.EVERY_HIT or verification.by in ("judge", "exact"):
        return False
    if verification.verdict is Verdict.REJECT:
        return (
            verification.by == "offline"
            and describe_reason(verification.reason)["reason_code"] in SURFACE_CHECKS
        )
    return verification.verdict is Verdict.ACCEPT and verification != SAME_ONCE_POLITE
