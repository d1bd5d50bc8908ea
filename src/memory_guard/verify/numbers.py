"""Numbers, amounts, dates and versions a question names.

"1 500 €", "1500€", "1,5 k€" and "1.5 thousand" are the same amount; "2023" and "2025", "T3"
and "T1", "Python 3.11" and "3.12" are not. Small numbers written in words count too
("dix jours" = "10 days").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from memory_guard.verify.text import fold

# Thousands grouped by spaces (French: "1 500 000", with normal, no-break or narrow spaces),
# commas (English: "1,500,000") or dots ("1.500.000"), then an optional decimal part.
_NUMBER = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d{1,3}(?:,\d{3})+(?!\d)|\d{1,3}(?:\.\d{3}){2,}|\d+)"
    r"(?:[.,](\d+))?"
    # "m" is a million only before a currency ("1,5 M€"); "10 m" is ten metres.
    r"(?:\s?(k|m(?=\s?(?:€|\$|eur|usd|fcfa|xof))|md|mds|million|millions|milliard|milliards|billion|billions"
    r"|thousand|mille)\b)?"
)
_CODE_DIGITS = re.compile(r"\b[a-z]+[-_]?(\d+(?:\.\d+)*)")
_SCALES = {
    "k": 1e3,
    "mille": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "million": 1e6,
    "millions": 1e6,
    "md": 1e9,
    "mds": 1e9,
    "milliard": 1e9,
    "milliards": 1e9,
    "billion": 1e9,
    "billions": 1e9,
}
_WORDS = {
    "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8, "neuf": 9,
    "dix": 10, "onze": 11, "douze": 12, "quinze": 15, "vingt": 20, "trente": 30, "quarante": 40,
    "cinquante": 50, "soixante": 60, "cent": 100,
    "two": 2, "three": 3, "four": 4, "five": 5, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "hundred": 100,
    "dizaine": 10, "vingtaine": 20, "trentaine": 30, "quarantaine": 40, "cinquantaine": 50,
    "soixantaine": 60, "centaine": 100, "twenties": 20, "thirties": 30, "forties": 40,
    "fifties": 50, "sixties": 60, "seventies": 70, "eighties": 80, "nineties": 90,
}  # fmt: skip
_WORD_NUMBER = re.compile(r"\b(" + "|".join(_WORDS) + r")\b")


@dataclass(frozen=True, slots=True)
class Number:
    value: float
    surface: str


def _value(whole: str, decimal: str | None, scale: str | None) -> float:
    digits = re.sub(r"[ \u00a0\u202f,.]", "", whole)
    number = float(f"{digits}.{decimal}") if decimal else float(digits)
    return number * _SCALES.get(scale or "", 1.0)


def numbers_in(text: str) -> list[Number]:
    """Every number of a question with the way it was written."""
    folded = fold(text)
    found: list[Number] = []
    taken: list[tuple[int, int]] = []
    for match in _CODE_DIGITS.finditer(folded):
        # "t3", "psycopg2", "python3.11": digits glued to a name are a version or a class.
        found.append(Number(_version_value(match.group(1)), match.group(0)))
        taken.append(match.span(1))
    for match in _NUMBER.finditer(folded):
        if any(start <= match.start() < end for start, end in taken):
            continue
        whole, decimal, scale = match.group(1), match.group(2), match.group(3)
        found.append(Number(_value(whole, decimal, scale), match.group(0).strip()))
    for match in _WORD_NUMBER.finditer(folded):
        found.append(Number(float(_WORDS[match.group(1)]), match.group(1)))
    return found


def is_number_word(word: str) -> bool:
    """A word that is a number by itself: "15", "1,5", "dix"."""
    return word[:1].isdigit() or word in _WORDS


def _version_value(digits: str) -> float:
    head, _, tail = digits.partition(".")
    return float(head) + (float("0." + tail.replace(".", "")) if tail else 0.0)


@dataclass(frozen=True, slots=True)
class NumberCheck:
    """How the numbers of two questions compare."""

    differ: bool
    one_sided: bool
    reason: str


def compare_numbers(stored: str, incoming: str) -> NumberCheck:
    a, b = numbers_in(stored), numbers_in(incoming)
    left = Counter(round(n.value, 6) for n in a)
    right = Counter(round(n.value, 6) for n in b)
    if left == right:
        return NumberCheck(False, False, "")
    only_a = [n.surface for n in a if left[round(n.value, 6)] > right[round(n.value, 6)]]
    only_b = [n.surface for n in b if right[round(n.value, 6)] > left[round(n.value, 6)]]
    one_sided = not only_a or not only_b
    shown_a = ", ".join(dict.fromkeys(only_a)) or "none"
    shown_b = ", ".join(dict.fromkeys(only_b)) or "none"
    return NumberCheck(True, one_sided, f"numbers differ: {shown_a} vs {shown_b}")
