"""Staff routes over the tenant's entries (API.md "Staff"): list, read, write, look up, audit."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from memory_guard.api.deps import ServicesDep, StaffDep, scope_of
from memory_guard.api.filters import EntryFilterDep
from memory_guard.api.openapi import STAFF_ERRORS
from memory_guard.api.params import Cursor, Id
from memory_guard.api.schemas import EntryCreateBody, EntryPatchBody, LookupBody
from memory_guard.core.verdict_reasons import describe_reason
from memory_guard.memory.entry import Status

router = APIRouter(prefix="/staff/memory", responses=STAFF_ERRORS)


@router.get("")
async def list_entries(
    principal: StaffDep,
    services: ServicesDep,
    where: EntryFilterDep,
    query: Annotated[str | None, Query(max_length=2000)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Cursor = None,
) -> dict[str, Any]:
    page = await services.memory.list_entries(principal.tenant, where, limit, cursor, query)
    max_age = services.memory.max_age
    # A semantic search gives each item its score; a plain list has none.
    scores = page.scores or {}
    items = [
        {**e.to_public(max_age), **({"score": scores[e.id]} if e.id in scores else {})} for e in page.items
    ]
    return {"items": items, "next_cursor": page.next_cursor}


@router.post("", status_code=201)
async def create_entry(body: EntryCreateBody, principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    scope = scope_of(principal, body.agent, body.project, body.phase)
    entry = await services.memory.create_faq(scope, body.question, body.answer, body.tags, principal.actor)
    return entry.to_public(services.memory.max_age)


@router.post("/lookup")
async def lookup(body: LookupBody, principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    scope = scope_of(principal, body.agent, body.project, body.phase)
    result = await services.memory.lookup(scope, body.question)
    served = result.served.entry.id if result.served else None
    return {
        "decision": result.decision.value,
        "served_entry_id": served,
        "scope_floor": round(result.scope_floor, 4) if result.scope_floor else None,
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
                    else {"verdict": None, "reason": "verifier off", **describe_reason("verifier off")}
                ),
            }
            for c in result.candidates
        ],
    }


@router.post("/prune")
async def prune(principal: StaffDep, services: ServicesDep) -> dict[str, int]:
    return {"removed": await services.memory.prune(principal.tenant, principal.actor)}


@router.get("/{entry_id}")
async def get_entry(entry_id: Id, principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    entry = await services.memory.get(principal.tenant, entry_id)
    return entry.to_public(services.memory.max_age)


@router.patch("/{entry_id}")
async def patch_entry(
    entry_id: Id, body: EntryPatchBody, principal: StaffDep, services: ServicesDep
) -> dict[str, Any]:
    entry = await services.memory.update(principal.tenant, entry_id, body.to_edit(), principal.actor)
    return entry.to_public(services.memory.max_age)


@router.post("/{entry_id}/validate")
async def validate_entry(entry_id: Id, principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    entry = await services.memory.set_status(principal.tenant, entry_id, Status.VALIDATED, principal.actor)
    return entry.to_public(services.memory.max_age)


@router.post("/{entry_id}/obsolete")
async def obsolete_entry(entry_id: Id, principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    entry = await services.memory.set_status(principal.tenant, entry_id, Status.OBSOLETE, principal.actor)
    return entry.to_public(services.memory.max_age)


@router.delete("/{entry_id}", status_code=204)
async def delete_entry(entry_id: Id, principal: StaffDep, services: ServicesDep) -> Response:
    await services.memory.delete(principal.tenant, entry_id, principal.actor)
    return Response(status_code=204)


@router.get("/{entry_id}/history")
async def entry_history(entry_id: Id, principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    events = await services.memory.history(principal.tenant, entry_id)
    return {"items": [event.to_public() for event in events]}


@router.get("/{entry_id}/usage")
async def entry_usage(entry_id: Id, principal: StaffDep, services: ServicesDep) -> dict[str, Any]:
    entry, usage = await services.memory.usage(principal.tenant, entry_id)
    return {
        "entry_id": entry.id,
        "usage_count": entry.usage_count,
        "last_used_at": entry.to_public(services.memory.max_age)["last_used_at"],
        "lookups": {"direct": usage.by_decision["direct"], "assisted": usage.by_decision["assisted"]},
        "recent": usage.recent,
    }
