"""What kind of answer a question asks for: a definition, a procedure, a cost, a person...

"Qu'est-ce qu'une DICT ?" and "Combien coûte une DICT ?" name the same thing and want
different answers. Questions whose kind is unclear ("Quel est…", "What are…") get no kind
and never conflict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_guard.verify.text import Question

# Checked in this order on the folded question; the first kind found wins.
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("cost", r"\bcombien (?:coute|ca coute|faut-il payer)|\bquel (?:est le )?(?:cout|prix)|"
                 r"\bhow much (?:does|do|is|will|would)\b.*\bcost|\bwhat (?:is|does) the (?:cost|price)|"
                 r"\bcost of\b|\bprix d"),
        ("count", r"\bcombien d(?:e\b|')|\bhow many\b|\bnombre de\b"),
        ("who", r"^(?:\W*)(?:qui|who)\b|\bqui (?:doit|peut|est|signe|paie|fait|redige)\b|\bwho\b"),
        ("when", r"\bquand\b|\ba partir de quand\b|\bwhen\b|\bquelle date\b|\bwhat date\b|"
                 r"\bjusqu'a quand\b|\bdes quand\b"),
        ("why", r"\bpourquoi\b|\bwhy\b|\bfor what reason\b"),
        ("where", r"^(?:\W*)(?:ou|where)\b|\bou se trouve\b|\bwhere\b"),
        ("explain", r"\bcomment (?:fonctionne|marche)|\bhow does .* work\b|\bhow do .* work\b"),
        ("define", r"\bqu'?est[- ]ce qu|\bc'?est quoi\b|\bque (?:signifie|veut dire)\b|"
                   r"\bça veut dire quoi|\bca veut dire quoi|\ba quoi correspond|\bdefini|"
                   r"\bkesako\b|\bwhat (?:is|are) (?:a|an)\b|\bwhat does .* mean\b|\bmeaning of\b|"
                   r"\bdefine\b|\bexplain what\b|"
                   r"^\W*(?:what is|what's|what are) (?!the (?:cost|price|difference|best|rate|amount|number|"
                   r"maximum|minimum|deadline|date))[^?]{1,40}\W*$"),
        ("how", r"\bcomment\b|\bhow (?:to|do|can|should|would)\b|\bprocedure (?:pour|de)\b|"
                r"\betapes? (?:pour|de)\b|\bsteps? to\b|\bmethode pour\b"),
    )
)  # fmt: skip

# Kinds that can serve each other's answer: a definition explains how a thing works.
_COMPATIBLE = {frozenset({"define", "explain"})}


def kind_of(question: Question) -> str:
    text = question.folded.replace("’", "'")
    for kind, pattern in _KINDS:
        if pattern.search(text):
            return kind
    return ""


@dataclass(frozen=True, slots=True)
class IntentCheck:
    stored: str
    incoming: str

    @property
    def differs(self) -> bool:
        if not self.stored or not self.incoming or self.stored == self.incoming:
            return False
        return frozenset({self.stored, self.incoming}) not in _COMPATIBLE

    @property
    def reason(self) -> str:
        return f"asks for another kind of answer: {self.stored} vs {self.incoming}" if self.differs else ""


def compare_intent(stored: Question, incoming: Question) -> IntentCheck:
    return IntentCheck(kind_of(stored), kind_of(incoming))
