"""Two names traded places: "convert ethane to ethene" is not "convert ethene to ethane".

The same words in another order usually ask the same thing ("velocity and speed", "speed and
velocity"); two meaningful words that swapped places across something other than "and",
"or", "vs" usually do not: who does what to whom, from where to where.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_guard.verify.text import STOP_WORDS, Question, stem, word_set

# Between these, the order of two words does not matter ("A and B" = "B and A").
_SYMMETRIC = word_set("and et or ou vs versus & / ni nor , entre between")


def _content(question: Question) -> list[tuple[int, str]]:
    return [(i, stem(w)) for i, w in enumerate(question.words) if w not in STOP_WORDS]


@dataclass(frozen=True, slots=True)
class OrderCheck:
    swapped: tuple[str, str] | None

    @property
    def reason(self) -> str:
        if self.swapped is None:
            return ""
        first, second = self.swapped
        return f"word order differs: {first} … {second} vs {second} … {first}"


def compare_order(stored: Question, incoming: Question) -> OrderCheck:
    a, b = _content(stored), _content(incoming)
    stems_a, stems_b = [s for _, s in a], [s for _, s in b]
    if sorted(stems_a) != sorted(stems_b) or stems_a == stems_b:
        return OrderCheck(None)
    moved = [k for k in range(len(stems_a)) if stems_a[k] != stems_b[k]]
    if len(moved) != 2:
        return OrderCheck(None)
    first, second = moved
    start, end = a[first][0], a[second][0]
    between = stored.words[start + 1 : end]
    if all(w in _SYMMETRIC or w in STOP_WORDS for w in between) and any(w in _SYMMETRIC for w in between):
        return OrderCheck(None)
    return OrderCheck((stored.words[start], stored.words[end]))
