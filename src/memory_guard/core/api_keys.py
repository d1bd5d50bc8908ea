"""API keys as configured: who calls (tenant) and what they may do (role)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum


class Role(StrEnum):
    CLIENT = "client"
    STAFF = "staff"


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One configured key: who calls (tenant) and what they may do (role)."""

    key: str
    tenant: str
    role: Role
    name: str | None = None  # who the audit trail names for this key's actions

    @property
    def actor(self) -> str:
        """A name for the audit trail that does not reveal the key."""
        if self.name:
            return self.name
        digest = hashlib.sha256(self.key.encode()).hexdigest()[:8]
        return f"{self.role.value} key {digest}"


def parse_api_keys(raw: str) -> tuple[ApiKey, ...]:
    """Parse `key:tenant:role[:name]` items separated by commas; raise ValueError on a bad one."""
    keys: list[ApiKey] = []
    seen: set[str] = set()
    for position, item in enumerate(part.strip() for part in raw.split(",")):
        if not item:
            continue
        parts = item.split(":")
        if len(parts) not in (3, 4) or not all(p.strip() for p in parts):
            raise ValueError(
                f"API_KEYS entry #{position + 1} must be key:tenant:role or key:tenant:role:name"
            )
        key, tenant, role = (p.strip() for p in parts[:3])
        name = parts[3].strip() if len(parts) == 4 else None
        if role not in {r.value for r in Role}:
            raise ValueError(
                f"API_KEYS entry #{position + 1}: role must be 'client' or 'staff', not {role!r}"
            )
        if key in seen:
            raise ValueError(f"API_KEYS entry #{position + 1}: the same key is configured twice")
        seen.add(key)
        keys.append(ApiKey(key=key, tenant=tenant, role=Role(role), name=name))
    return tuple(keys)
