"""Same-question pairs that differ only on the surface: the same text, another case, no accents,
no closing mark, a greeting or a thanks around it.

The template pairs and QQP teach what changes an answer; none of them shows a question beside
itself, and a model trained on them alone scored a question against its own copy at about 0.8,
under its own direct cut-off. These pairs are the cheapest cosine hits the service sees (a
repeat typed again) and must read as the same question.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Sequence

PREFIXES = (
    "Bonjour, ",
    "Bonjour ! ",
    "Excusez-moi, ",
    "Petite question : ",
    "Salut, ",
    "Hi, ",
    "Hello! ",
    "Quick question: ",
    "Sorry, ",
)
SUFFIXES = (" merci", " Merci d'avance.", " svp", " s'il vous plaît", " please", " thanks!", " Thank you.")


def _no_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _no_mark(text: str) -> str:
    return text.rstrip(" ?!.")


def _variants(rng: random.Random) -> list[Callable[[str], str]]:
    return [
        lambda t: t,
        str.lower,
        _no_accents,
        _no_mark,
        lambda t: rng.choice(PREFIXES) + t[:1].lower() + t[1:],
        lambda t: _no_mark(t) + " ?" + rng.choice(SUFFIXES),
        lambda t: _no_accents(t.lower()).rstrip(" ?"),
    ]


def surface_pairs(questions: Sequence[str], count: int, rng: random.Random) -> list[tuple[str, str]]:
    """`count` (question, surface variant) pairs over distinct questions, seeded by rng."""
    distinct = sorted(set(questions))
    chosen = rng.sample(distinct, min(count, len(distinct)))
    variants = _variants(rng)
    return [(q, rng.choice(variants)(q)) for q in chosen]
