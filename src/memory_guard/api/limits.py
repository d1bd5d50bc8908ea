"""Refuse oversized bodies before reading them (pure ASGI, so SSE streams pass untouched)."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.types import ASGIApp, Receive, Scope, Send

from memory_guard.api.errors import error_response


class BodyLimit:
    """`larger` gives some paths (file uploads) a limit of their own."""

    def __init__(self, app: ASGIApp, max_bytes: int, larger: Mapping[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.larger = dict(larger or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            length = headers.get(b"content-length")
            limit = self.larger.get(scope["path"], self.max_bytes)
            if length is not None and (not length.isdigit() or int(length) > limit):
                response = error_response(
                    413, "payload_too_large", f"request bodies are limited to {limit} bytes"
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
