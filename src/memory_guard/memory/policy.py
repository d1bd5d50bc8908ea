"""The learning policy (seed 000 §5): which completed answers become memory entries."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

INVALID_MARKER = "<non valide>"


class CacheMode(StrEnum):
    USE = "use"
    BYPASS = "bypass"
    REFRESH = "refresh"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a run ended, as far as learning is concerned."""

    answer: str
    truncated: bool
    cache: CacheMode
    standalone: bool
    company_specific: bool


def skip_reason(outcome: Outcome) -> str | None:
    """Why this answer must not be learned, or None when it may be."""
    if outcome.cache is CacheMode.BYPASS:
        return "cache_bypass"
    if not outcome.answer.strip():
        return "empty_answer"
    if INVALID_MARKER in outcome.answer.casefold():
        return "marked_invalid"
    if outcome.truncated:
        return "truncated"
    if not outcome.standalone:
        return "follow_up_not_standalone"
    if outcome.company_specific:
        return "company_specific"
    return None
