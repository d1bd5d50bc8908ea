"""Staff routes over the tenant's memory (API.md "Staff")."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response

from memory_guard.api.deps import ServicesDep, StaffDep, scope_of
from memory_guard.api.schemas import EntryCreateBody, EntryPatchBody, LookupBody, ReviewBody
from memory_guard.memory.entry import Status
from memory_guard.memory.storage import EntryFilter

router = APIRouter(prefix="/staff/memory")


@router.get("")
async def list_entries(
    principal: StaffDep,
    services: ServicesDep,
    query: Annotated[str | None, Query(max_length=2000)] = None,
    status: Status | None = None,
    agent: Annotated[str | None, Query(max_length=200)] = None,
    project: Annotated[str | None, Query(max_length=200)] = None,
    phase: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=40)] = None,
) -> dict[str, Any]:
    page = await services.memory.list_entries(
        principal.tenant, EntryFilter(status, agent, project, phase), limit, cursor, query
    )
    max_age = services.memory.max_age
    return {"items": [e.to_public(max_age) for e in page.items], "next_cursor": page.next_cursor}


@router.post("", status_code=201)
async def create_entry(body: EntryCreateBody, principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    scope = scope_of(principal, body.agent, body.project, body.phase)
    entry = await services.memory.create_faq(scope, body.question, body.answer, body.tags)
    return entry.to_public(services.memory.max_age)


@router.post("/lookup")
async def lookup(body: LookupBody, principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    scope = scope_of(principal, body.agent, body.project, body.phase)
    result = await services.memory.lookup(scope, body.question)
    served = result.served.entry.id if result.served else None
    return {
        "decision": result.decision.value,
        "served_entry_id": served,
        "candidates": [
            {
                "entry_id": c.entry.id,
                "score": round(c.score, 4),
                "matched_question": c.entry.question,
                "exact": c.exact,
                "served": c.entry.id == served,
                **(
                    c.verification.to_json()
                    if c.verification
                    else {"verdict": None, "reason": "verifier off"}
                ),
            }
            for c in result.candidates
        ],
    }


@router.get("/stats")
async def stats(principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    return await services.memory.stats(principal.tenant)


@router.get("/hits")
async def served_hits(
    principal: StaffDep,
    services: ServicesDep,
    review: Literal["right", "wrong", "none"] | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[int | None, Query(ge=1)] = None,
) -> dict[str, Any]:
    """The answers served from memory, newest first, to review (`review=none`: not yet reviewed)."""
    items, next_cursor = await services.hits.page(principal.tenant, review, limit, cursor)
    return {
        "items": [hit.to_public() for hit in items],
        "next_cursor": None if next_cursor is None else str(next_cursor),
    }


@router.post("/hits/{lookup_id}/review")
async def review_hit(
    lookup_id: int, body: ReviewBody, principal: StaffDep, services: ServicesDep
) -> dict[str, Any]:
    await services.hits.review(principal.tenant, lookup_id, body.correct, by="staff")
    return {"lookup_id": lookup_id, "review": "right" if body.correct else "wrong"}


@router.post("/prune")
async def prune(principal: StaffDep, services: ServicesDep) -> dict[str, int]:
    return {"removed": await services.memory.prune(principal.tenant)}


@router.get("/{entry_id}")
async def get_entry(entry_id: int, principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    entry = await services.memory.get(principal.tenant, entry_id)
    return entry.to_public(services.memory.max_age)


@router.patch("/{entry_id}")
async def patch_entry(
    entry_id: int, body: EntryPatchBody, principal: StaffDep, services: ServicesDep
) -> dict[str, Any]:
    entry = await services.memory.update(
        principal.tenant, entry_id, answer=body.answer, status=body.status, tags=body.tags, by_staff=True
    )
    return entry.to_public(services.memory.max_age)


@router.delete("/{entry_id}", status_code=204)
async def delete_entry(entry_id: int, principal: StaffDep, services: ServicesDep) -> Response:
    await services.memory.delete(principal.tenant, entry_id)
    return Response(status_code=204)
