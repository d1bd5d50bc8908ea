"""The lookup log's records: one per guard decision, the ground truth of the stats."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory_guard.core.scope import Scope


@dataclass(frozen=True, slots=True)
class LookupRecord:
    scope: Scope
    decision: str
    entry_id: int | None
    score: float | None
    tokens_saved: int
    question: str | None = None
    verdict: str | None = None
    reason: str | None = None
    probability: float | None = None
    verified_by: str | None = None
    variant_id: int | None = None  # the variant of `entry_id` whose wording matched, if one did


@dataclass(frozen=True, slots=True)
class LoggedLookup:
    """A decision to log under an id given out when it was made, and the usage it implies."""

    id: int
    record: LookupRecord
    used_ids: Sequence[int]
    usage: int
    at: datetime


@dataclass(frozen=True, slots=True)
class ReusedLookup:
    """An assisted lookup whose LLM answered with one grounding entry's stored answer as it is
    (`use_memory_answer`): the entry it chose, and the tokens the stored answer spared."""

    lookup_id: int
    tenant: str
    entry_id: int
    tokens_saved: int


@dataclass(frozen=True, slots=True)
class LookupTotals:
    by_decision: dict[str, int]
    tokens_saved: int


@dataclass(frozen=True, slots=True)
class EntryUsage:
    """The decisions an entry was the best match of, and the latest of them."""

    by_decision: dict[str, int]
    recent: list[dict[str, Any]]
    # Its answers served through one of its question variants: how many, reviewed, said wrong.
    variant_hits: tuple[int, int, int] = (0, 0, 0)
