"""Who is calling: the bearer key names the tenant and the role; the body never does."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from fastapi import Request

from memory_guard.core.errors import Forbidden, Unauthorized
from memory_guard.settings import ApiKey, Role

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


# The dependencies are `async def` though they never wait: FastAPI runs a plain `def` one in its
# thread pool, a round trip through another thread on every request for a few microseconds of work.
async def client(request: Request) -> Principal:
    ring: KeyRing = request.app.state.keyring
    return ring.identify(request.headers.get("authorization"))


async def staff(request: Request) -> Principal:
    principal = await client(request)
    if Role.STAFF not in principal.roles:
        raise Forbidden("this route is for staff keys only", code="staff_only")
    return principal
