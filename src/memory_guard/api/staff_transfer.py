"""Staff routes that move a memory between environments as JSON Lines."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from memory_guard.api.deps import ServicesDep, StaffDep
from memory_guard.api.filters import EntryFilterDep
from memory_guard.errors import InvalidRequest, PayloadTooLarge

router = APIRouter(prefix="/staff/memory")

IMPORT_PATH = "/staff/memory/import"


@router.get("/export")
async def export(principal: StaffDep, services: ServicesDep, where: EntryFilterDep) -> StreamingResponse:
    """The tenant's entries (the list's filters apply), one JSON object per line."""
    return StreamingResponse(
        services.transfer.export(principal.tenant, where),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": 'attachment; filename="memory-export.jsonl"'},
    )


@router.post(IMPORT_PATH.removeprefix("/staff/memory"))
async def import_entries(
    request: Request, principal: StaffDep, services: ServicesDep, skip_bad_lines: bool = False
) -> dict[str, Any]:
    """The body is the JSON Lines file itself. Nothing is imported from a file with a bad line
    unless `skip_bad_lines` is true."""
    limit = services.settings.import_max_bytes
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
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    report = await services.transfer.import_lines(principal.tenant, lines, principal.actor, skip_bad_lines)
    return report.to_public()
