"""The learning policy: which completed answers become memory entries.

An answer is learned only when the run completed, is not marked invalid, stands alone, and is
not tailored to the asking company. The company profile sits in the system prompt, so an answer
may be tailored to it without any company-specific skill being called: one that names the
company's own values (its name, city, sector, figures) is not learned into the shared scope.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from memory_guard.core.normalize import normalize_question

INVALID_MARKER = "<non valide>"


class CacheMode(StrEnum):
    """`use`: look up, learn. `bypass`: neither. `refresh`: no lookup, and the answer learned
    replaces the `auto` entry. `no_store`: look up, learn nothing."""

    USE = "use"
    BYPASS = "bypass"
    REFRESH = "refresh"
    NO_STORE = "no_store"

    @property
    def looks_up(self) -> bool:
        return self in (CacheMode.USE, CacheMode.NO_STORE)


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
    if outcome.cache is CacheMode.NO_STORE:
        return "cache_no_store"
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


_NOT_WORD = re.compile(r"[^\w]+")

# Shorter values ("SA", "BTP") would match common words and block learning for nothing.
_MIN_VALUE_CHARS = 4


def mentions_profile(answer: str, entreprise: dict[str, Any] | None) -> bool:
    if not entreprise or not answer:
        return False
    text = f" {_words(answer)} "
    return any(f" {value} " in text for value in _profile_values(entreprise))


def _profile_values(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _profile_values(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _profile_values(item)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        normalized = _words(str(value))
        if len(normalized) >= _MIN_VALUE_CHARS:
            yield normalized


def _words(text: str) -> str:
    return _NOT_WORD.sub(" ", normalize_question(text)).strip()
