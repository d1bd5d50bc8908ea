"""Does an answer carry the company it was written for?

The company profile sits in the system prompt, so an answer may be tailored to it
without any company-specific skill being called. An answer that names the company's
own values (its name, city, sector, figures) is treated as company-specific and not
learned into the shared scope.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from memory_guard.memory.normalize import normalize_question

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
