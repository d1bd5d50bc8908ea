"""The answers of the probes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memory_guard.api.responses.base import ResponseModel


class Health(ResponseModel):
    status: Literal["ok"]


class Ready(ResponseModel):
    status: Literal["ready"]
    store: Literal["ok"]
    embedder: str = Field(description="the embedding model in use")
    cross_encoder: str | None = Field(description="the cross-encoder model in use; null when it is off")
