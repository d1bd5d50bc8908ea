"""Staff routes that move a memory between environments as JSON Lines."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from sse_starlette.sse import EventSourceResponse

from memory_guard.agent.events import ErrorEvent
from memory_guard.api.deps import ServicesDep, StaffDep
from memory_guard.api.filters import EntryFilterDep
from memory_guard.api.openapi import STAFF_ERRORS, stream_of
from memory_guard.api.responses.transfer import (
    IMPORT_EVENTS,
    ImportDoneEvent,
    ImportEvent,
    ImportProgressEvent,
    ImportReport,
)
from memory_guard.api.sse import event_stream
from memory_guard.core.errors import InvalidRequest, MemoryGuardError, PayloadTooLarge
from memory_guard.memory.transfer import ImportProgress

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/staff/memory", responses=STAFF_ERRORS)

IMPORT_PATH = "/staff/memory/import"


class NdjsonResponse(StreamingResponse):
    media_type = "application/x-ndjson"


_EXPORT_ANSWER: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "JSON Lines: one entry per line, as `import` reads them.",
        "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
    }
}


@router.get("/export", response_class=NdjsonResponse, responses=_EXPORT_ANSWER)
async def export(principal: StaffDep, services: ServicesDep, where: EntryFilterDep) -> NdjsonResponse:
    """The tenant's entries (the list's filters apply), one JSON object per line."""
    return NdjsonResponse(
        services.transfer.export(principal.tenant, where),
        headers={"Content-Disposition": 'attachment; filename="memory-export.jsonl"'},
    )


# With `Accept: text/event-stream`, the answer is a stream instead of the report.
_IMPORT_STREAM: dict[int | str, dict[str, Any]] = {200: {"content": stream_of(IMPORT_EVENTS)}}


@router.post(IMPORT_PATH.removeprefix("/staff/memory"), response_model=ImportReport, responses=_IMPORT_STREAM)
async def import_entries(
    request: Request, principal: StaffDep, services: ServicesDep, skip_bad_lines: bool = False
) -> ImportReport | EventSourceResponse:
    """The body is the JSON Lines file itself. Nothing is imported from a file with a bad line
    unless `skip_bad_lines` is true. With `Accept: text/event-stream` the answer is a stream of
    `progress` events ({done, total} entries embedded) ending with one `done` (the report) or
    one `error`; a bad file is refused before the stream starts, with the same 4xx as without."""
    lines = await _lines(request, services.settings.import_max_bytes)
    plan = await services.transfer.plan_import(principal.tenant, lines, skip_bad_lines)
    progress = services.transfer.run_import(plan, principal.actor)
    if "text/event-stream" in request.headers.get("accept", ""):
        return event_stream(_progress_events(progress))
    async for _ in progress:
        pass
    return ImportReport.model_validate(plan.report.to_public())


async def _progress_events(progress: AsyncIterator[ImportProgress]) -> AsyncIterator[ImportEvent]:
    try:
        async for step in progress:
            if step.report is None:
                yield ImportProgressEvent(done=step.done, total=step.total)
            else:
                yield ImportDoneEvent.model_validate(step.report.to_public())
    except MemoryGuardError as exc:
        yield ErrorEvent(code=exc.code, message=exc.message)
    except Exception:
        # Past the first event the status line is sent: the stream itself must say it failed.
        logger.exception("an import failed midway; nothing of it was stored")
        yield ErrorEvent(code="internal_error", message="the import failed; nothing was stored")


async def _lines(request: Request, limit: int) -> list[str]:
    """The uploaded file's lines; refuses a file over `limit` bytes or not in UTF-8."""
    body = bytearray()
    # Read by chunks so that a body sent without Content-Length cannot exceed the limit either.
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            raise PayloadTooLarge(f"import files are limited to {limit} bytes (IMPORT_MAX_BYTES)")
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidRequest(
            f"the file is not UTF-8 text (byte {exc.start} cannot be read)", code="invalid_encoding"
        ) from None
    # Split on newlines only: a JSON string may hold U+2028, which str.splitlines would cut.
    return [line.removesuffix("\r") for line in text.split("\n")]
