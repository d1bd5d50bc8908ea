"""Refuse oversized bodies by counting the bytes received (pure ASGI, so SSE streams pass untouched).

Content-Length alone is not enough: a chunked body has none, and the framework reads a body whole
before any dependency (authentication included) runs. So every `receive` is counted, and the request
is answered 413 as soon as the count passes the limit, before the next chunk is read.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory_guard.api.errors import error_response


class BodyLimit:
    """`larger` gives some paths (file uploads) a limit of their own."""

    def __init__(self, app: ASGIApp, max_bytes: int, larger: Mapping[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.larger = dict(larger or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.larger.get(scope["path"], self.max_bytes)
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            await _refusal(limit, scope["path"])(scope, receive, send)
            return
        has_body = (length is not None and length != b"0") or b"transfer-encoding" in headers
        counted = _CountedBody(limit, scope, receive, send, has_body)
        try:
            await self.app(scope, counted.receive, counted.send)
        except Exception:
            # Once refused, the app only sees a client that went away; whatever that raises is moot.
            if not counted.refused:
                raise


def _refusal(limit: int, path: str) -> ASGIApp:
    message = f"request bodies are limited to {limit} bytes"
    response = error_response(413, "payload_too_large", message, path=path)
    # The rest of the body is not wanted: closing the connection spares the client sending it.
    response.headers["Connection"] = "close"
    return response


class _CountedBody:
    def __init__(self, limit: int, scope: Scope, receive: Receive, send: Send, has_body: bool) -> None:
        self.limit = limit
        self.received = 0
        self.refused = False
        self.started = False
        self.body_done = not has_body
        self._scope = scope
        self._receive = receive
        self._send = send

    async def receive(self) -> Message:
        if self.refused:
            return {"type": "http.disconnect"}
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            self.body_done = not message.get("more_body", False)
            if self.received > self.limit:
                self.refused = True
                if not self.started:
                    await _refusal(self.limit, self._scope["path"])(self._scope, _nothing, self._send)
                # Past its response's start the app cannot be answered 413: it sees the client leave.
                return {"type": "http.disconnect"}
        return message

    async def send(self, message: Message) -> None:
        if self.refused and not self.started:
            return  # the 413 is the answer; what the app makes of the disconnect is not sent
        if message["type"] == "http.response.start":
            self.started = True
            if message["status"] >= 400 and not self.body_done:
                # Refused before its body was read (a missing key on an upload): the server would
                # otherwise read the rest of it only to throw it away.
                message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
        await self._send(message)


async def _nothing() -> Message:
    return {"type": "http.disconnect"}
