"""The comparison of a stored question with an incoming one, as checks and as numbers.

`compare` runs every check once. `Comparison.conflict` is the first check that proves the
questions differ (its reason is shown to staff); `Comparison.vector` feeds the learned pair
classifier, in the order of `FEATURES`.

The residual similarity compares what is left of each question once the words they share are
taken out ("planning" vs "budget", "tarif" vs "prix"): synonyms stay close, another subject
does not. It needs the embedding of those leftovers, which the caller provides.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from memory_guard.verify.intent import IntentCheck, compare_intent
from memory_guard.verify.numbers import NumberCheck, compare_numbers
from memory_guard.verify.order import OrderCheck, compare_order
from memory_guard.verify.polarity import PolarityCheck, compare_polarity
from memory_guard.verify.terms import TermCheck, compare_terms
from memory_guard.verify.text import STOP_WORDS, Question, stem

FEATURES = (
    "similarity",
    "similarity_above_0_9",
    "word_overlap",
    "trigram_overlap",
    "unshared_words",
    "length_ratio",
    "numbers_differ",
    "numbers_one_sided",
    "negation_differs",
    "opposite_meaning",
    "key_term_swapped",
    "key_term_one_sided",
    "intent_differs",
    "intent_unknown",
    "residual_similarity",
    "leftover_sides",
    "leftover_stored",
    "leftover_incoming",
)


def leftover(question: Question, other: Question) -> str:
    """The meaningful words of `question` that `other` does not share."""
    return " ".join(w for w in question.words if w not in STOP_WORDS and stem(w) not in other.content)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 1.0


@dataclass(frozen=True, slots=True)
class Comparison:
    similarity: float
    stored: Question
    incoming: Question
    numbers: NumberCheck
    polarity: PolarityCheck
    terms: TermCheck
    intent: IntentCheck
    order: OrderCheck
    leftovers: tuple[str, str]

    @property
    def conflict(self) -> str:
        """Why the two questions cannot share an answer; empty when no check proves it."""
        if self.numbers.differ:
            return self.numbers.reason
        for reason in (self.polarity.reason, self.terms.reason, self.intent.reason, self.order.reason):
            if reason:
                return reason
        return ""

    @property
    def needs_residual(self) -> bool:
        """Whether the residual similarity means something: both questions keep words of their own."""
        return all(self.leftovers)

    def vector(self, residual: float | None = None) -> npt.NDArray[np.float64]:
        """The features; `residual` is the cosine of the two leftovers' embeddings, when both exist."""
        a, b = self.stored, self.incoming
        left_a, left_b = self.leftovers
        unshared = len(a.content ^ b.content)
        lengths = sorted((len(a.content) or 1, len(b.content) or 1))
        return np.array(
            [
                self.similarity,
                max(self.similarity - 0.9, 0.0),
                _jaccard(a.content, b.content),
                _jaccard(a.trigrams, b.trigrams),
                min(unshared, 10) / 10,
                lengths[0] / lengths[1],
                float(self.numbers.differ and not self.numbers.one_sided),
                float(self.numbers.one_sided),
                float(self.polarity.negation_differs),
                float(bool(self.polarity.opposite)),
                float(self.terms.swapped),
                float(self.terms.one_sided),
                float(self.intent.differs),
                float(not self.intent.stored or not self.intent.incoming),
                1.0 if residual is None else residual,
                float(bool(left_a)) + float(bool(left_b)),
                min(len(left_a.split()), 5) / 5,
                min(len(left_b.split()), 5) / 5,
            ]
        )


# One view of a text, its words and stems worked out once: a stored question meets many
# incoming ones.
@lru_cache(maxsize=4096)
def _question(text: str) -> Question:
    return Question(text)


def forget_comparisons() -> None:
    """Empty the caches of pairs and questions, so that a benchmark times the work, not a lookup."""
    _checked.cache_clear()
    _question.cache_clear()


def compare(stored: str, incoming: str, similarity: float) -> Comparison:
    return replace(_checked(stored, incoming), similarity=similarity)


# The checks depend on the two texts only. A cosine hit repeats pairs (the same FAQ entry for
# a question asked again, the staff console re-inspecting one), and they cost about half a
# millisecond of the event loop's time each; a pair is a few KB.
@lru_cache(maxsize=4096)
def _checked(stored: str, incoming: str) -> Comparison:
    a, b = _question(stored), _question(incoming)
    return Comparison(
        similarity=0.0,
        stored=a,
        incoming=b,
        numbers=compare_numbers(stored, incoming),
        polarity=compare_polarity(a, b),
        terms=compare_terms(a, b),
        intent=compare_intent(a, b),
        order=compare_order(a, b),
        leftovers=(leftover(a, b), leftover(b, a)),
    )
