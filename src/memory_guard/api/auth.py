"""Who is calling: the bearer key names the tenant and the role; the body never does."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Request, Security
from fastapi.openapi.models import HTTPBearer as BearerModel
from fastapi.security.base import SecurityBase
from pydantic import SecretStr

from memory_guard.core.api_keys import ApiKey, Role
from memory_guard.core.errors import Forbidden, Unauthorized
from memory_guard.ops.request_context import note_tenant

DEV_TENANT = "default"


@dataclass(frozen=True, slots=True)
class Principal:
    tenant: str
    roles: frozenset[Role]
    actor: str = "dev mode"  # the audit trail's name for the caller


def bearer_token(authorization: str | None) -> str:
    if not authorization:
        raise Unauthorized("missing Authorization: Bearer <key> header", code="missing_key")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("the Authorization header must be 'Bearer <key>'", code="invalid_key")
    return token.strip()


def same_secret(expected: str, given: str) -> bool:
    return hmac.compare_digest(expected.encode(), given.encode())


class KeyRing:
    def __init__(self, keys: tuple[ApiKey, ...]) -> None:
        self._keys = keys

    @property
    def dev_mode(self) -> bool:
        return not self._keys

    def identify(self, authorization: str | None) -> Principal:
        principal = self._identify(authorization)
        note_tenant(principal.tenant)  # for the request's access line
        return principal

    def _identify(self, authorization: str | None) -> Principal:
        if self.dev_mode:
            return Principal(DEV_TENANT, frozenset(Role))
        token = bearer_token(authorization)
        found: ApiKey | None = None
        # Compare against every key so the time taken does not tell how close a guess was.
        for key in self._keys:
            if same_secret(key.key, token):
                found = key
        if found is None:
            raise Unauthorized("unknown API key", code="invalid_key")
        # Staff may also chat: a staff member tests the assistant they audit.
        roles = frozenset(Role) if found.role is Role.STAFF else frozenset({Role.CLIENT})
        return Principal(found.tenant, roles, found.actor)


# The schemes below are what the OpenAPI document declares (an HTTP bearer each: the Authorize button
# of /docs, and the `security` of every route that depends on one); calling one checks the header.
# Their calls are `async def` though they never wait: FastAPI runs a plain `def` in its thread pool,
# a round trip through another thread on every request for a few microseconds of work.
class KeyScheme(SecurityBase):
    def __init__(self) -> None:
        self.model = BearerModel(description="A key of API_KEYS: its tenant and role decide what it sees.")
        self.scheme_name = "bearer"

    async def __call__(self, request: Request) -> Principal:
        ring: KeyRing = request.app.state.keyring
        return ring.identify(request.headers.get("authorization"))


class MetricsTokenScheme(SecurityBase):
    def __init__(self) -> None:
        self.model = BearerModel(description="METRICS_TOKEN: /metrics asks for it when it is set.")
        self.scheme_name = "metrics_token"

    async def __call__(self, request: Request) -> None:
        expected: SecretStr = request.app.state.metrics_token
        token = expected.get_secret_value()
        if token and not same_secret(token, bearer_token(request.headers.get("authorization"))):
            raise Unauthorized("/metrics needs Authorization: Bearer <METRICS_TOKEN>", code="invalid_key")


client = KeyScheme()
metrics_reader = MetricsTokenScheme()


async def staff(principal: Annotated[Principal, Security(client)]) -> Principal:
    if Role.STAFF not in principal.roles:
        raise Forbidden("this route is for staff keys only", code="staff_only")
    return principal
