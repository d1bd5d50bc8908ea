"""Server-Sent Events: the one place where a streamed event becomes a frame on the wire.

Every stream the API sends (a chat run, an import's progress) is a sequence of `StreamEvent` models:
the frame's `event:` is the model's `type`, its `data:` the model as one line of JSON.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from sse_starlette.sse import EventSourceResponse

from memory_guard.agent.events import StreamEvent

PING_SECONDS = 15


async def _frames(events: AsyncIterator[StreamEvent]) -> AsyncIterator[dict[str, str]]:
    async for event in events:
        yield {"event": event.type, "data": event.model_dump_json()}


def event_stream(events: AsyncIterator[StreamEvent]) -> EventSourceResponse:
    # X-Accel-Buffering: a reverse proxy must not hold the pieces back until the end.
    return EventSourceResponse(_frames(events), ping=PING_SECONDS, headers={"X-Accel-Buffering": "no"})
