"""Who made a change, as the staff page names it in its own language."""

from __future__ import annotations

import re
from typing import Any

# The actors the service itself writes, by code, for the staff page to name in its own language.
_SYSTEM_ACTORS = {
    "memory-guard (learning)": "learning",
    "memory-guard (auto-prune)": "auto_prune",
    "memory-guard (judge)": "judge",
    "client feedback": "client_feedback",
    "client": "client",
}
_KEY_ACTOR = re.compile(r"(?P<role>client|staff) key (?P<digest>[0-9a-f]{8})")


def describe_actor(actor: str | None, prefix: str = "actor") -> dict[str, Any]:
    """`<prefix>_code` and `<prefix>_params` of an actor: a code for what the service writes ("key" for
    a key named by its digest), None for a person's own name, which is shown as written."""
    code: str | None = None
    params: dict[str, str] = {}
    if actor is not None:
        code = _SYSTEM_ACTORS.get(actor)
        if code is None and (found := _KEY_ACTOR.fullmatch(actor)):
            code, params = "key", found.groupdict()
    return {f"{prefix}_code": code, f"{prefix}_params": params}
