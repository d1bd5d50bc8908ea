"""OpenTelemetry traces, optional: one span per request, and under it a span for each of its steps
(the memory lookup, the verification within it, each LLM turn), sent over OTLP/HTTP when
OTEL_EXPORTER_OTLP_ENDPOINT is set.

OpenTelemetry is the `otel` extra (`pip install 'memory-guard[otel]'`), imported only once an
endpoint is configured: without one nothing of it is loaded, and with one but without the extra
the service starts untraced and says so in its log. Each app gets a tracer provider of its own
(never the process-wide one), shut down, its last spans sent, when the app stops.

Spans are started and ended by hand, never made "current": an answer streams from a generator that
may be closed in another task, where detaching an OpenTelemetry context would fail. So every step's
span is a child of the request's, none of another step's.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from memory_guard.ops.request_context import RequestFacts, current

logger = logging.getLogger(__name__)

SERVICE_NAME = "memory-guard"
TRACES_PATH = "/v1/traces"  # what OTLP/HTTP appends to OTEL_EXPORTER_OTLP_ENDPOINT for traces
MISSING_EXTRA = (
    "OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed: requests are not traced. "
    "Install the otel extra: pip install 'memory-guard[otel]'"
)


class _Span:
    """A started span and the tracer that makes its children."""

    def __init__(self, tracer: Any, span: Any) -> None:
        self._tracer = tracer
        self._span = span

    def set_attribute(self, key: str, value: str | int | float | bool) -> None:
        self._span.set_attribute(key, value)

    @contextmanager
    def child(self, name: str) -> Iterator[None]:
        from opentelemetry import trace

        span = self._tracer.start_span(name, context=trace.set_span_in_context(self._span))
        try:
            yield
        except BaseException as exc:
            span.record_exception(exc)
            span.set_status(trace.Status(trace.StatusCode.ERROR, type(exc).__name__))
            raise
        finally:
            span.end()


class Tracing:
    def __init__(self, tracer: Any = None, provider: Any = None) -> None:
        self._tracer = tracer
        self._provider = provider

    @classmethod
    def configure(cls, endpoint: str) -> Tracing:
        """Traces to `endpoint` (an OTLP/HTTP collector's base URL); off when it is empty, or when
        the otel extra is missing (with a warning)."""
        if not endpoint.strip():
            return cls()
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            logger.warning(MISSING_EXTRA)
            return cls()
        # OTEL_SERVICE_NAME, when set, names the service as the OpenTelemetry conventions say.
        name = os.environ.get("OTEL_SERVICE_NAME") or SERVICE_NAME
        provider = TracerProvider(resource=Resource.create({"service.name": name}))
        exporter = OTLPSpanExporter(endpoint=endpoint.strip().rstrip("/") + TRACES_PATH)
        provider.add_span_processor(BatchSpanProcessor(exporter))
        logger.info("tracing requests to the OTLP collector at %s", endpoint.strip())
        return cls(provider.get_tracer("memory_guard"), provider)

    @property
    def enabled(self) -> bool:
        return self._tracer is not None

    def start(self, facts: RequestFacts, headers: Mapping[str, str]) -> RequestTrace | None:
        """The request's span, a child of the caller's own trace when its `traceparent` names one."""
        if self._tracer is None:
            return None
        from opentelemetry import trace
        from opentelemetry.propagate import extract

        parent = extract({k: v for k, v in headers.items() if k in ("traceparent", "tracestate")})
        span = self._tracer.start_span(
            facts.method,
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes={"http.request.method": facts.method, "memory_guard.request_id": facts.request_id},
        )
        return RequestTrace(self._tracer, span)

    def shutdown(self) -> None:
        """Sends the spans still queued, then stops."""
        if self._provider is not None:
            self._provider.shutdown()


class RequestTrace(_Span):
    """The span of one request, ended with what the request turned out to be."""

    def end(self, facts: RequestFacts, status: int) -> None:
        from opentelemetry import trace

        inner = self._span
        if facts.route is not None:
            inner.update_name(f"{facts.method} {facts.route}")
            inner.set_attribute("http.route", facts.route)
        inner.set_attribute("http.response.status_code", status)
        values = {
            "tenant": facts.tenant,
            "decision": facts.decision,
            "score": facts.score,
            "verdict": facts.verdict,
            "error": facts.error,
            "prompt_tokens": facts.prompt_tokens,
            "completion_tokens": facts.completion_tokens,
            "tokens_saved": facts.tokens_saved,
        }
        for key, value in values.items():
            if value is not None:
                inner.set_attribute(f"memory_guard.{key}", value)
        if status >= 500 or facts.error is not None:
            inner.set_status(trace.Status(trace.StatusCode.ERROR, facts.error or f"HTTP {status}"))
        inner.end()


def child_span(name: str) -> AbstractContextManager[None]:
    """A span under the current request's, around one step (lookup, verification, an LLM turn);
    nothing when the request is not traced."""
    facts = current()
    span = facts.span if facts is not None else None
    if not isinstance(span, _Span):
        return nullcontext()
    return span.child(name)
