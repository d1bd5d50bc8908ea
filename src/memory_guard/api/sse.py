"""Framing of chat events as Server-Sent Events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from sse_starlette.sse import EventSourceResponse

from memory_guard.agent.events import Event

PING_SECONDS = 15


async def _frames(events: AsyncIterator[Event]) -> AsyncIterator[dict[str, str]]:
    async for event in events:
        yield {"event": event.type, "data": json.dumps(event.data(), ensure_ascii=False)}


def event_stream(events: AsyncIterator[Event]) -> EventSourceResponse:
    # X-Accel-Buffering: a reverse proxy must not hold the pieces back until the end.
    return EventSourceResponse(_frames(events), ping=PING_SECONDS, headers={"X-Accel-Buffering": "no"})
