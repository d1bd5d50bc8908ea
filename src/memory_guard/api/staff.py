"""Staff routes over the tenant's entries (docs/API.md, "Staff routes"): list, read, write, look up, audit."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from memory_guard.api.deps import ServicesDep, StaffDep, scope_of
from memory_guard.api.filters import EntryFilterDep
from memory_guard.api.openapi import STAFF_ERRORS, errors
from memory_guard.api.params import Cursor, Id
from memory_guard.api.responses.audit import EntryHistory
from memory_guard.api.responses.entries import (
    EntryDetail,
    EntryOut,
    EntryPage,
    EntryUsage,
    LookupOut,
    Removed,
    VariantList,
    VariantOut,
)
from memory_guard.api.schemas import EntryCreateBody, EntryPatchBody, LookupBody, VariantBody
from memory_guard.core.decision import Decision
from memory_guard.core.verdict_reasons import describe_reason
from memory_guard.memory.entry import Status

# 409: another live entry of the scope already holds the question (create, edit, status change), or
# a variant's wording (duplicate_variant, too_many_variants).
router = APIRouter(prefix="/staff/memory", responses={**STAFF_ERRORS, **errors(409)})


@router.get("")
async def list_entries(
    principal: StaffDep,
    services: ServicesDep,
    where: EntryFilterDep,
    query: Annotated[str | None, Query(max_length=2000)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Cursor = None,
) -> EntryPage:
    page = await services.search.list_entries(principal.tenant, where, limit, cursor, query)
    max_age = services.entries.max_age
    # A semantic search gives each item its score; a plain list has none.
    scores = page.scores or {}
    items = [
        {**e.to_public(max_age), **({"score": scores[e.id]} if e.id in scores else {})} for e in page.items
    ]
    return EntryPage.model_validate({"items": items, "next_cursor": page.next_cursor})


@router.post("", status_code=201)
async def create_entry(body: EntryCreateBody, principal: StaffDep, services: ServicesDep) -> EntryOut:
    scope = scope_of(principal, body.agent, body.project, body.phase)
    entry = await services.entries.create_faq(scope, body.question, body.answer, body.tags, principal.actor)
    return EntryOut.of(entry, services.entries.max_age)


@router.post("/lookup")
async def lookup(body: LookupBody, principal: StaffDep, services: ServicesDep) -> LookupOut:
    scope = scope_of(principal, body.agent, body.project, body.phase)
    result = await services.search.lookup(scope, body.question)
    served = result.served.entry.id if result.served else None
    return LookupOut.model_validate(
        {
            "decision": result.decision.value,
            "served_entry_id": served,
            "scope_floor": round(result.scope_floor, 4) if result.scope_floor else None,
            "candidates": [
                {
                    "entry_id": c.entry.id,
                    "score": round(c.score, 4),
                    "matched_question": c.wording,
                    "exact": c.exact,
                    "served": c.entry.id == served,
                    **(
                        {
                            "variant": {
                                "id": c.variant.id,
                                "status": c.variant.status,
                                "confirmations": c.variant.confirmations,
                                "held": c.held,
                            }
                        }
                        if c.variant
                        else {}
                    ),
                    **(
                        c.verification.to_json()
                        if c.verification
                        else {
                            "verdict": None,
                            "reason": "verifier off",
                            "cross_encoder_probability": None,
                            **describe_reason("verifier off"),
                        }
                    ),
                }
                for c in result.candidates
            ],
        }
    )


@router.post("/prune")
async def prune(principal: StaffDep, services: ServicesDep) -> Removed:
    return Removed(removed=await services.entries.prune(principal.tenant, principal.actor))


@router.get("/{entry_id}")
async def get_entry(entry_id: Id, principal: StaffDep, services: ServicesDep) -> EntryDetail:
    entry = await services.entries.get(principal.tenant, entry_id)
    variants = await services.variants.of_entry(principal.tenant, entry_id)
    return EntryDetail.model_validate(
        {**entry.to_public(services.entries.max_age), "variants": [v.to_public() for v in variants]}
    )


@router.get("/{entry_id}/variants")
async def list_variants(entry_id: Id, principal: StaffDep, services: ServicesDep) -> VariantList:
    variants = await services.variants.of_entry(principal.tenant, entry_id)
    return VariantList.model_validate({"items": [v.to_public() for v in variants]})


@router.post("/{entry_id}/variants", status_code=201)
async def add_variant(
    entry_id: Id, body: VariantBody, principal: StaffDep, services: ServicesDep
) -> VariantOut:
    variant = await services.variants.add(principal.tenant, entry_id, body.question, principal.actor)
    return VariantOut.of(variant)


@router.delete("/{entry_id}/variants/{variant_id}", status_code=204)
async def remove_variant(
    entry_id: Id, variant_id: Id, principal: StaffDep, services: ServicesDep
) -> Response:
    await services.variants.remove(principal.tenant, entry_id, variant_id, principal.actor)
    return Response(status_code=204)


@router.post("/{entry_id}/variants/{variant_id}/validate")
async def validate_variant(
    entry_id: Id, variant_id: Id, principal: StaffDep, services: ServicesDep
) -> VariantOut:
    variant = await services.variants.validate(principal.tenant, entry_id, variant_id, principal.actor)
    return VariantOut.of(variant)


@router.patch("/{entry_id}")
async def patch_entry(
    entry_id: Id, body: EntryPatchBody, principal: StaffDep, services: ServicesDep
) -> EntryOut:
    entry = await services.entries.update(principal.tenant, entry_id, body.to_edit(), principal.actor)
    return EntryOut.of(entry, services.entries.max_age)


@router.post("/{entry_id}/validate")
async def validate_entry(entry_id: Id, principal: StaffDep, services: ServicesDep) -> EntryOut:
    entry = await services.entries.set_status(principal.tenant, entry_id, Status.VALIDATED, principal.actor)
    return EntryOut.of(entry, services.entries.max_age)


@router.post("/{entry_id}/obsolete")
async def obsolete_entry(entry_id: Id, principal: StaffDep, services: ServicesDep) -> EntryOut:
    entry = await services.entries.set_status(principal.tenant, entry_id, Status.OBSOLETE, principal.actor)
    return EntryOut.of(entry, services.entries.max_age)


@router.delete("/{entry_id}", status_code=204)
async def delete_entry(entry_id: Id, principal: StaffDep, services: ServicesDep) -> Response:
    await services.entries.delete(principal.tenant, entry_id, principal.actor)
    return Response(status_code=204)


@router.get("/{entry_id}/history")
async def entry_history(entry_id: Id, principal: StaffDep, services: ServicesDep) -> EntryHistory:
    events = await services.audit.history(principal.tenant, entry_id)
    return EntryHistory.model_validate({"items": [event.to_public() for event in events]})


@router.get("/{entry_id}/usage")
async def entry_usage(entry_id: Id, principal: StaffDep, services: ServicesDep) -> EntryUsage:
    entry, usage = await services.search.usage(principal.tenant, entry_id)
    return EntryUsage.model_validate(
        {
            "entry_id": entry.id,
            "usage_count": entry.usage_count,
            "last_used_at": entry.to_public(services.entries.max_age)["last_used_at"],
            "lookups": {d: usage.by_decision[d] for d in (Decision.DIRECT, Decision.ASSISTED)},
            "recent": usage.recent,
            "variant_hits": dict(zip(("direct", "reviewed", "wrong"), usage.variant_hits, strict=True)),
        }
    )
