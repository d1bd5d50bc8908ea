"""The verifier's reasons as stable codes with their parameters, for the staff page to word them.

The reasons are English sentences, and the lookup log keeps them as such; a reader in another
language needs what kind of reason it is and the words it quotes. Every sentence the verifier and
the judge write is listed here (tests/test_staff_data.py runs a case of each); one that is not
comes out as `other`, and the page shows its English text.
"""

from __future__ import annotations

import re
from typing import Any

_NONE = "none"  # what the numbers check writes for a side with no number of its own

_REASONS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (code, re.compile(pattern, re.DOTALL))
    for code, pattern in (
        ("exact", r"same question"),
        ("classifier_same", r"same question \(p=(?P<p>[0-9.]+)\)"),
        ("classifier_other", r"likely another question \(p=(?P<p>[0-9.]+)\)"),
        ("classifier_unsure", r"unsure \(p=(?P<p>[0-9.]+)\)"),
        ("checks_only", r"no difference found \(checks only\)"),
        ("same_once_polite", r"same question once greetings and politeness are set aside"),
        ("cross_encoder_same", r"cross-encoder: same question \(p=(?P<p>[0-9.]+)\)"),
        ("cross_encoder_other", r"cross-encoder: likely another question \(p=(?P<p>[0-9.]+)\)"),
        ("cross_encoder_unsure", r"cross-encoder: unsure \(p=(?P<p>[0-9.]+)\)"),
        (
            "cross_encoder_unread",
            r"not read by the cross-encoder \(past its best (?P<count>\d+) candidates\)",
        ),
        ("numbers_differ", r"numbers differ: (?P<stored>.*) vs (?P<incoming>.*)"),
        ("opposite_meaning", r"opposite meaning: (?P<terms>.*)"),
        ("negation", r"negation in one question only"),
        ("key_term", r"key term differs: (?P<stored>.*) vs (?P<incoming>.*)"),
        ("kind_of_answer", r"asks for another kind of answer: (?P<stored>\w+) vs (?P<incoming>\w+)"),
        ("word_order", r"word order differs: (?P<order>.*)"),
        ("judge", r"judge: (?P<reason>.*)"),
        ("verifier_off", r"verifier off"),
    )
)


def describe_reason(reason: str | None) -> dict[str, Any]:
    """`reason_code` and `reason_params` of a reason (both None when there is no reason)."""
    if reason is None:
        return {"reason_code": None, "reason_params": {}}
    for code, pattern in _REASONS:
        found = pattern.fullmatch(reason)
        if found:
            params = {name: "" if value == _NONE else value for name, value in found.groupdict().items()}
            return {"reason_code": code, "reason_params": params}
    return {"reason_code": "other", "reason_params": {}}
