"""The answers of the probes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memory_guard.api.responses.base import ResponseModel


class Health(ResponseModel):
    status: Literal["ok"]


class UpstreamReadiness(ResponseModel):
    configured: bool = Field(
        description="whether an LLM upstream is configured (LLM_API_KEY, or an LLM_BASE_URL of one's own)"
    )
    reachable: bool | None = Field(
        description="whether it answered the last check (GET {LLM_BASE_URL}/models, kept 10 seconds) "
        "without refusing the credentials or failing; null when nothing is configured or the first "
        "check is still running"
    )
    detail: str = Field(description="what the check found, or what to set")


class Ready(ResponseModel):
    status: Literal["ready"]
    store: Literal["ok"]
    embedder: str = Field(description="the embedding model in use")
    cross_encoder: str | None = Field(description="the cross-encoder model in use; null when it is off")
    upstream: UpstreamReadiness = Field(
        description="the LLM upstream, which only questions not answered from memory need: its state "
        "never makes the service unready"
    )
