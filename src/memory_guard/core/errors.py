"""The one error tree of the service.

Domain code raises these; the API layer renders every one of them the same way
(`{"error": {"code", "message"}}` with `status`), and the chat stream turns them into
an `error` event.
"""

from __future__ import annotations

from typing import Any


class MemoryGuardError(Exception):
    status: int = 500
    code: str = "internal_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        # Fields rendered next to code and message, e.g. the bad lines of an import.
        self.extra: dict[str, Any] = {}


class InvalidRequest(MemoryGuardError):
    status = 422
    code = "invalid_request"


class Unauthorized(MemoryGuardError):
    status = 401
    code = "unauthorized"


class Forbidden(MemoryGuardError):
    status = 403
    code = "forbidden"


class NotFound(MemoryGuardError):
    status = 404
    code = "not_found"


class Conflict(MemoryGuardError):
    status = 409
    code = "conflict"


class DuplicateQuestion(Conflict):
    """A live entry already holds this question in this scope; `entry_id` in the body names it."""

    code = "duplicate_question"

    def __init__(self, entry_id: int) -> None:
        super().__init__(
            f"entry {entry_id} already holds this question in this scope: edit that entry, "
            "or mark it obsolete before writing a new one"
        )
        self.extra = {"entry_id": entry_id}


class PayloadTooLarge(MemoryGuardError):
    status = 413
    code = "payload_too_large"


class UpstreamError(MemoryGuardError):
    """The LLM or embeddings upstream failed (5xx, refused, cut stream)."""

    status = 502
    code = "upstream_error"


class UpstreamTimeout(UpstreamError):
    status = 504
    code = "upstream_timeout"


class UpstreamNotConfigured(UpstreamError):
    """No LLM upstream is configured and an answer needs one: raised before any call is made."""

    status = 503
    code = "llm_not_configured"


class NotReady(MemoryGuardError):
    status = 503
    code = "not_ready"
