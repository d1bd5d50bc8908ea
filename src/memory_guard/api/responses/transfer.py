"""The answers of an import: its report, or the events of its progress stream."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from memory_guard.agent.events import ErrorEvent, StreamEvent
from memory_guard.api.responses.base import ResponseModel


class LineErrorOut(ResponseModel):
    line: int = Field(description="1 for the file's first line")
    message: str = Field(description="what is wrong, in English")
    code: str = Field(description="the same as a stable code, for the staff page to word")
    params: dict[str, Any]


class ImportReport(ResponseModel):
    imported: int
    already_present: int = Field(description="lines whose question the scope already holds")
    skipped: list[LineErrorOut] = Field(description="the bad lines left out (skip_bad_lines)")


class ImportProgressEvent(StreamEvent):
    type: Literal["progress"] = "progress"
    done: int = Field(description="entries stored so far")
    total: int


class ImportDoneEvent(ImportReport, StreamEvent):
    """The last event of an import that succeeded: its report."""

    terminal: ClassVar[bool] = True
    type: Literal["done"] = "done"


ImportEvent = ImportProgressEvent | ImportDoneEvent | ErrorEvent
IMPORT_EVENTS: tuple[type[StreamEvent], ...] = (ImportProgressEvent, ImportDoneEvent, ErrorEvent)
