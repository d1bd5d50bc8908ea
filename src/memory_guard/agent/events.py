"""The events a chat run emits, in API.md's vocabulary. Transport-free: `api/` frames them as SSE."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PREVIEW_CHARS = 200


@dataclass(frozen=True, slots=True)
class Event:
    type: str
    payload: dict[str, Any] = field(default_factory=dict)

    def data(self) -> dict[str, Any]:
        return {"type": self.type, **self.payload}

    @property
    def terminal(self) -> bool:
        return self.type in {"done", "error"}


def text(content: str) -> Event:
    return Event("text", {"content": content})


def status(content: str) -> Event:
    return Event("status", {"content": content})


def skill_start(skill: str, params: Any) -> Event:
    return Event("skill_start", {"skill": skill, "params": params})


def skill_result(skill: str, preview: str) -> Event:
    if len(preview) > PREVIEW_CHARS:
        preview = preview[: PREVIEW_CHARS - 1] + "…"
    return Event("skill_result", {"skill": skill, "result_preview": preview})


def error(code: str, message: str) -> Event:
    return Event("error", {"code": code, "message": message})
