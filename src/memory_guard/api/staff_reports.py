"""Staff routes that report on the tenant's memory: stats, served answers, the audit log and
the undoing of what it records."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from memory_guard.api.deps import ServicesDep, StaffDep
from memory_guard.api.openapi import STAFF_ERRORS, errors
from memory_guard.api.params import MAX_ID, Cursor, Id, OptionalId
from memory_guard.api.responses.audit import AuditPage
from memory_guard.api.responses.entries import EntryOut
from memory_guard.api.responses.reports import Reviewed, ServedHitPage, Stats
from memory_guard.api.schemas import ReviewBody
from memory_guard.memory.audit import Action

router = APIRouter(prefix="/staff/memory", responses=STAFF_ERRORS)


@router.get("/stats")
async def stats(
    principal: StaffDep,
    services: ServicesDep,
    days: Annotated[int, Query(ge=1, le=366, description="days of the timeline, today included")] = 30,
) -> Stats:
    return Stats.model_validate(await services.stats.report(principal.tenant, days))


@router.get("/hits")
async def served_hits(
    principal: StaffDep,
    services: ServicesDep,
    review: Literal["right", "wrong", "none"] | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
) -> ServedHitPage:
    """The answers served from memory, newest first, to review (`review=none`: not yet reviewed)."""
    items, next_cursor = await services.hits.page(principal.tenant, review, limit, cursor)
    return ServedHitPage.model_validate(
        {
            "items": [hit.to_public() for hit in items],
            "next_cursor": None if next_cursor is None else str(next_cursor),
        }
    )


@router.post("/hits/{lookup_id}/review")
async def review_hit(lookup_id: Id, body: ReviewBody, principal: StaffDep, services: ServicesDep) -> Reviewed:
    await services.hits.review(principal.tenant, lookup_id, body.correct, by=principal.actor)
    return Reviewed(lookup_id=lookup_id, review="right" if body.correct else "wrong")


@router.get("/audit")
async def audit_log(
    principal: StaffDep,
    services: ServicesDep,
    entry_id: OptionalId = None,
    action: Annotated[list[Action] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Cursor = None,
) -> AuditPage:
    """Every recorded change to the tenant's entries, newest first (`action` may repeat)."""
    events, next_cursor = await services.audit.audit_log(
        principal.tenant, entry_id, action or (), limit, cursor
    )
    return AuditPage.model_validate(
        {"items": [event.to_public() for event in events], "next_cursor": next_cursor}
    )


@router.post("/audit/{event_id}/restore", responses=errors(409))
async def restore(event_id: Id, principal: StaffDep, services: ServicesDep) -> EntryOut:
    """Undo a recorded change: the entry goes back to the event's `before`, deleted ones included."""
    entry = await services.audit.restore(principal.tenant, event_id, principal.actor)
    return EntryOut.of(entry, services.entries.max_age)
