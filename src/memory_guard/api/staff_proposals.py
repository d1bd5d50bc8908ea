"""Staff routes over the proposals client feedback left: list, read, accept, reject."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query

from memory_guard.api.deps import ServicesDep, StaffDep
from memory_guard.api.openapi import STAFF_ERRORS, errors
from memory_guard.api.params import Cursor, Id
from memory_guard.api.responses.proposals import ProposalOut, ProposalPage
from memory_guard.api.schemas import AcceptProposalBody, RejectProposalBody
from memory_guard.memory.proposal import ProposalStatus

# 409: a proposal already decided, or (accept) an entry deleted or changed since.
router = APIRouter(prefix="/staff/memory/proposals", responses={**STAFF_ERRORS, **errors(409)})


@router.get("")
async def list_proposals(
    principal: StaffDep,
    services: ServicesDep,
    status: ProposalStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Cursor = None,
) -> ProposalPage:
    """The tenant's proposals, newest first (`status=pending`: those waiting for staff)."""
    items, next_cursor = await services.proposals.page(principal.tenant, status, limit, cursor)
    return ProposalPage.model_validate({"items": [p.to_public() for p in items], "next_cursor": next_cursor})


@router.get("/{proposal_id}")
async def get_proposal(proposal_id: Id, principal: StaffDep, services: ServicesDep) -> ProposalOut:
    proposal = await services.proposals.get(principal.tenant, proposal_id)
    return ProposalOut.model_validate(proposal.to_public())


@router.post("/{proposal_id}/accept")
async def accept_proposal(
    proposal_id: Id,
    principal: StaffDep,
    services: ServicesDep,
    body: Annotated[AcceptProposalBody | None, Body()] = None,
) -> ProposalOut:
    """Apply it to its entry; 409 `entry_changed` (with the entry's `current` state) when the entry
    changed since the proposal was made, unless `force`."""
    force = body.force if body else False
    proposal = await services.proposals.accept(principal.tenant, proposal_id, principal.actor, force)
    return ProposalOut.model_validate(proposal.to_public())


@router.post("/{proposal_id}/reject")
async def reject_proposal(
    proposal_id: Id,
    principal: StaffDep,
    services: ServicesDep,
    body: Annotated[RejectProposalBody | None, Body()] = None,
) -> ProposalOut:
    reason = body.reason if body else None
    proposal = await services.proposals.reject(principal.tenant, proposal_id, principal.actor, reason)
    return ProposalOut.model_validate(proposal.to_public())
