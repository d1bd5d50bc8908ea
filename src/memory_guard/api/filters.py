"""The entry filters of the staff list and export, read from the query string."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated

from fastapi import Depends, Query

from memory_guard.core.bounds import Day
from memory_guard.core.errors import InvalidRequest
from memory_guard.memory.entry import Source, Status
from memory_guard.memory.store import EntryFilter

_Name = Annotated[str | None, Query(max_length=200)]


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def entry_filter(
    status: Status | None = None,
    source: Source | None = None,
    agent: _Name = None,
    project: _Name = None,
    phase: _Name = None,
    tag: _Name = None,
    created_from: Annotated[Day | None, Query(description="first day (UTC) of creation")] = None,
    created_to: Annotated[Day | None, Query(description="last day (UTC) of creation, included")] = None,
) -> EntryFilter:
    if created_from and created_to and created_from > created_to:
        raise InvalidRequest("created_from is after created_to", code="invalid_date_range")
    return EntryFilter(
        status=status,
        agent=agent,
        project=project,
        phase=phase,
        source=source,
        tag=tag,
        created_from=_day_start(created_from) if created_from else None,
        created_before=_day_start(created_to + timedelta(days=1)) if created_to else None,
    )


EntryFilterDep = Annotated[EntryFilter, Depends(entry_filter)]
