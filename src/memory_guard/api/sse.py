"""Server-Sent Events: the one place where a streamed event becomes a frame on the wire.

Every stream the API sends (a chat run, an import's progress) is a sequence of `StreamEvent` models:
the frame's `event:` is the model's `type`, its `data:` the model as one line of JSON.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from sse_starlette.sse import EventSourceResponse

from memory_guard.agent.events import StreamEvent
from memory_guard.ops.request_context import current

PING_SECONDS = 15


async def _frames(events: AsyncIterator[StreamEvent]) -> AsyncIterator[dict[str, str]]:
    async for event in events:
        yield {"event": event.type, "data": _with_request_id(event).model_dump_json()}


def _with_request_id(event: StreamEvent) -> StreamEvent:
    """A stream's last event names the request (api/request_id.py), to quote in a complaint."""
    facts = current()
    if not event.terminal or facts is None or "request_id" not in type(event).model_fields:
        return event
    return event.model_copy(update={"request_id": facts.request_id})


def event_stream(events: AsyncIterator[StreamEvent]) -> EventSourceResponse:
    # X-Accel-Buffering: a reverse proxy must not hold the pieces back until the end.
    return EventSourceResponse(_frames(events), ping=PING_SECONDS, headers={"X-Accel-Buffering": "no"})
