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


@dataclass(frozen=True, slots=True)
class LoggedLookup:
    """A decision to log under an id given out when it was made, and the usage it implies."""

    id: int
    record: LookupRecord
    used_ids: Sequence[int]
    usage: int
    at: datetime


@dataclass(frozen=True, slots=True)
class LookupTotals:
    by_decision: dict[str, int]
    tokens_saved: int


@dataclass(frozen=True, slots=True)
class EntryUsage:
    """The decisions an entry was the best match of, and the latest of them."""

    by_decision: dict[str, int]
    recent: list[dict[str, Any]]
