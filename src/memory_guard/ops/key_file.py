"""The keys of a first start: `memory-guard serve --key-file PATH` with no API_KEYS.

A service that listens beyond loopback needs keys, and a fresh `docker compose up` has none. Rather
than open it to every caller, its first start writes one new staff key of the dev tenant to PATH, in
the data volume and readable by the service's user only, and later starts read the file back. The
key is never logged: logs travel further than a volume, and whoever may read the volume may read
the database too. The file holds API_KEYS items, one per line, for an operator to add keys to.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from memory_guard.core.api_keys import Role, parse_api_keys

KEY_PREFIX = "mg-"
FIRST_KEY_NAME = "first start"  # what the audit trail names the generated key's actions


@dataclass(frozen=True, slots=True)
class KeyFile:
    api_keys: str  # the API_KEYS value the file holds
    created: bool  # this call wrote it


def load_or_create(path: Path, tenant: str) -> KeyFile:
    """The keys of `path`, written first with one new staff key of `tenant` when it does not
    exist. Raises OSError when it can be neither read nor written, ValueError when what it holds
    is not API_KEYS items."""
    key = KEY_PREFIX + secrets.token_urlsafe(24)
    line = f"{key}:{tenant}:{Role.STAFF.value}:{FIRST_KEY_NAME}"
    try:
        # O_EXCL: of two services started at once on one volume, one writes and the other reads.
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(line + "\n")
        return KeyFile(line, created=True)
    held = ",".join(line.strip() for line in path.read_text("utf-8").splitlines() if line.strip())
    if not parse_api_keys(held):
        raise ValueError(f"{path} holds no key")
    return KeyFile(held, created=False)
