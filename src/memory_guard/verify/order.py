"""Two names traded places: "convert ethane to ethene" is not "convert ethene to ethane".

A name may be several words: "a roundabout over traffic lights" is not "traffic lights over a
roundabout".

The same words in another order usually ask the same thing ("velocity and speed", "speed and
velocity"); two meaningful words that swapped places across something other than "and",
"or", "vs" usually do not: who does what to whom, from where to where.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_guard.verify.text import STOP_WORDS, Question, stem, word_set

# Between these, the order of two words does not matter ("A and B" = "B and A").
_SYMMETRIC = word_set("and et or ou vs versus & / ni nor , entre between")
# A name of several words that moved counts only across one of these: "a heat pump over a
# gas boiler". Otherwise the move is a topic put first ("Python : lire un fichier JSON" =
# "lire un fichier JSON en Python").
_DIRECTIONAL = word_set("over than to into from instead rather plutot vers au aux")


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


def _swapped_spans(a: list[str], b: list[str]) -> tuple[int, int, int, int] | None:
    """(start of X, end of X, start of Y, end of Y) in `a` when `b` is `a` with the spans
    X and Y traded ("roundabout … traffic lights" vs "traffic lights … roundabout")."""
    first = next(k for k in range(len(a)) if a[k] != b[k])
    last = max(k for k in range(len(a)) if a[k] != b[k])
    middle = a[first : last + 1]
    for x in range(1, len(middle)):
        for y in range(1, len(middle) - x + 1):
            left, right = middle[:x], middle[len(middle) - y :]
            between = middle[x : len(middle) - y]
            if left != right and b[first : last + 1] == right + between + left:
                return first, first + x - 1, last - y + 1, last
    return None


def compare_order(stored: Question, incoming: Question) -> OrderCheck:
    a, b = _content(stored), _content(incoming)
    stems_a, stems_b = [s for _, s in a], [s for _, s in b]
    if sorted(stems_a) != sorted(stems_b) or stems_a == stems_b:
        return OrderCheck(None)
    spans = _swapped_spans(stems_a, stems_b)
    if spans is None:
        return OrderCheck(None)
    x_start, x_end, y_start, y_end = (a[k][0] for k in spans)
    between = stored.words[x_end + 1 : y_start]
    if all(w in _SYMMETRIC or w in STOP_WORDS for w in between) and any(w in _SYMMETRIC for w in between):
        return OrderCheck(None)
    several = spans[1] > spans[0] or spans[3] > spans[2]
    if several and not any(w in _DIRECTIONAL for w in between):
        return OrderCheck(None)
    first = " ".join(stored.words[x_start : x_end + 1])
    second = " ".join(stored.words[y_start : y_end + 1])
    return OrderCheck((first, second))
