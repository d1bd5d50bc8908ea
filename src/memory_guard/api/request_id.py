"""Every request gets an id, echoed on its response, and one access log line once it has ended.

Pure ASGI (a BaseHTTPMiddleware would buffer the chat streams): the id is the client's
`X-Request-ID` when it is a plain token (at most 128 of A-Z a-z 0-9 . _ : -), a new one otherwise,
never the client's text as it came, which would let a caller write into the log. The request's
facts (ops/request_context.py) are bound for the layers below to fill; when the response has
ended, the stream included, the access line is logged, the latency observed per decision, the
tokens saved counted and the trace span ended.

The framework's outermost layer answers an unhandled exception's 500 from outside every
middleware, so without the header: this one answers it first, with the header, and lets the
exception go on to be logged.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory_guard.api.errors import internal_error_response
from memory_guard.ops.request_context import RequestFacts, bound
from memory_guard.ops.request_log import log_request
from memory_guard.ops.tracing import Tracing

HEADER = "X-Request-ID"
_VALID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def request_id_from(given: str | None) -> str:
    """The client's id when it is a plain token, else a new one (uuid4 hex)."""
    if given is not None and _VALID.fullmatch(given):
        return given
    return uuid.uuid4().hex


class RequestId:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = _Exchange(scope)
        try:
            with bound(exchange.facts):
                await self.app(scope, receive, exchange.wrap(send))
        except Exception:
            if not exchange.response_started:
                await internal_error_response(scope["path"])(scope, receive, exchange.wrap(send))
            raise
        finally:
            exchange.end()  # a response that never finished: the client left, or the app failed


class _Exchange:
    """One request's id, facts and span, ended once: just before its response's last byte (so
    that whoever reads the whole answer finds its log line written), or when the app returns
    without one."""

    def __init__(self, scope: Scope) -> None:
        self._started = time.perf_counter()
        self._scope = scope
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        self.facts = RequestFacts(request_id_from(headers.get("x-request-id")), scope["method"])
        self._state: Any = getattr(scope.get("app"), "state", None)
        self._tracing: Tracing | None = getattr(self._state, "tracing", None)
        self._span = self._tracing.start(self.facts, headers) if self._tracing is not None else None
        self.facts.span = self._span
        self.status = 500
        self.response_started = False
        self._ended = False

    def wrap(self, send: Send) -> Send:
        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.response_started = True
                self.status = message["status"]
                message.setdefault("headers", [])
                MutableHeaders(scope=message)[HEADER] = self.facts.request_id
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                self.end()
            await send(message)

        return send_with_id

    def end(self) -> None:
        if self._ended:
            return
        self._ended = True
        seconds = time.perf_counter() - self._started
        facts = self.facts
        facts.route = getattr(self._scope.get("route"), "path", None)
        log_request(facts, self.status, seconds * 1000)
        services = getattr(self._state, "services", None)
        if services is not None and facts.decision is not None:
            services.metrics.request_seconds.labels(decision=facts.decision).observe(seconds)
            if facts.tokens_saved:
                services.metrics.tokens_saved.inc(facts.tokens_saved)
        if self._span is not None:
            self._span.end(facts, self.status)
