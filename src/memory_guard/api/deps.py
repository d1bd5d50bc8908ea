"""Dependencies shared by the routers."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from memory_guard.agent.profiles import DEFAULT_AGENT
from memory_guard.api.auth import Principal, client, staff
from memory_guard.core.scope import Scope
from memory_guard.services import Services


async def services(request: Request) -> Services:
    # async, like auth.client: a plain def would run in the thread pool, a round trip per request.
    found: Services = request.app.state.services
    return found


ServicesDep = Annotated[Services, Depends(services)]
ClientDep = Annotated[Principal, Depends(client)]
StaffDep = Annotated[Principal, Depends(staff)]


def scope_of(principal: Principal, agent: str | None, project: str | None, phase: str | None) -> Scope:
    return Scope(principal.tenant, agent or DEFAULT_AGENT, project or "", phase or "")
