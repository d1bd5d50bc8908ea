"""The body of every error answer, 4xx and 5xx alike (api/errors.py renders it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ErrorDetail(BaseModel):
    """`code` and `message` always; some codes add fields of their own: `entry_id`
    (duplicate_question), `lines` (invalid_import: the bad lines, each with `line`, `message`,
    `code`, `params`), `current` (entry_changed: the entry's question, answer and status now)."""

    model_config = ConfigDict(extra="allow")

    code: str = Field(description="stable, machine-readable: e.g. invalid_request, not_found")
    message: str = Field(description="what is wrong, for a person")


class ErrorBody(BaseModel):
    """The body of every 4xx and 5xx answer."""

    error: ErrorDetail
