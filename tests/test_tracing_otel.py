"""OpenTelemetry traces (the `otel` extra), sent over OTLP/HTTP to a collector of the test's own:
one span per request with its id and decision, children for the lookup, the verification and each
LLM turn; without the extra, the service starts untraced and says so; without an endpoint,
OpenTelemetry's SDK is never imported."""

from __future__ import annotations

import gzip
import subprocess
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memory_guard.ops.tracing import MISSING_EXTRA
from tests.server import LiveApp, chat
from tests.serving import ThreadedServer
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quelle est la durée de la garantie de parfait achèvement ?"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


class Collector:
    """An OTLP/HTTP trace receiver on loopback: it keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        self._lock = threading.Lock()
        app = Starlette(routes=[Route("/v1/traces", self._receive, methods=["POST"])])
        self._server = ThreadedServer(app)

    async def _receive(self, request: Request) -> Response:
        body = await request.body()
        encoding = request.headers.get("content-encoding")
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        export = ExportTraceServiceRequest.FromString(body)
        with self._lock:
            for resource in export.resource_spans:
                for scoped in resource.scope_spans:
                    self.spans.extend(scoped.spans)
        return Response(ExportTraceServiceResponse().SerializeToString(), media_type="application/x-protobuf")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.port}"

    def named(self, name: str) -> list[Any]:
        return [span for span in self.spans if span.name == name]

    def __enter__(self) -> Collector:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()


def attributes(span: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for attribute in span.attributes:
        value = attribute.value
        values[attribute.key] = getattr(value, value.WhichOneof("value"))
    return values


@pytest.fixture
def collector() -> Iterator[Collector]:
    with Collector() as running:
        yield running


def test_each_request_is_a_span_with_its_steps(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream, collector: Collector
) -> None:
    live = app_factory(otel_exporter_otlp_endpoint=collector.url)
    fresh_upstream.push(Reply(text="Un an.", usage=(90, 10)))
    with httpx.Client(base_url=live.base_url, headers={"Authorization": "Bearer ka"}, timeout=10) as acme:
        acme.headers["X-Request-ID"] = "otel-miss"
        assert chat(acme, message=QUESTION).done["decision"] == "miss"
        acme.headers["X-Request-ID"] = "otel-direct"
        assert chat(acme, message=QUESTION).done["decision"] == "direct"
    live.stop()  # the last spans are sent when the app stops

    requests = {attributes(span)["memory_guard.request_id"]: span for span in collector.named("POST /chat")}
    miss, direct = requests["otel-miss"], requests["otel-direct"]
    expected = {
        "http.request.method": "POST",
        "http.route": "/chat",
        "http.response.status_code": 200,
        "memory_guard.tenant": "acme",
        "memory_guard.decision": "miss",
        "memory_guard.prompt_tokens": 90,
        "memory_guard.completion_tokens": 10,
    }
    assert {key: attributes(miss).get(key) for key in expected} == expected
    assert attributes(direct)["memory_guard.decision"] == "direct"
    assert attributes(direct)["memory_guard.tokens_saved"] == 100

    def children(parent: Any) -> list[str]:
        return sorted(
            span.name
            for span in collector.spans
            if span.parent_span_id == parent.span_id and span.trace_id == parent.trace_id
        )

    # The steps are the request's children (the verification runs within the lookup's time).
    assert children(miss) == ["llm.turn", "memory.lookup", "memory.verify"]
    assert children(direct) == ["memory.lookup"], "an exact match: nothing to verify, no LLM call"


def test_a_callers_traceparent_makes_the_request_part_of_its_trace(
    app_factory: Callable[..., LiveApp], collector: Collector
) -> None:
    live = app_factory(otel_exporter_otlp_endpoint=collector.url)
    parent = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
    assert httpx.get(f"{live.base_url}/healthz", headers={"traceparent": parent}).status_code == 200
    live.stop()
    (span,) = collector.named("GET /healthz")
    assert span.trace_id.hex() == TRACE_ID
    assert span.parent_span_id.hex() == "00f067aa0ba902b7"


def test_without_the_extra_the_service_starts_untraced_and_says_so(
    app_factory: Callable[..., LiveApp], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # As if the otel extra were not installed: importing its modules fails.
    for module in ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http.trace_exporter"):
        monkeypatch.setitem(sys.modules, module, None)
    live = app_factory(otel_exporter_otlp_endpoint="http://127.0.0.1:9")
    assert MISSING_EXTRA in caplog.text
    answer = httpx.get(f"{live.base_url}/healthz", headers={"X-Request-ID": "untraced"})
    assert answer.status_code == 200 and answer.headers["x-request-id"] == "untraced"


def test_without_an_endpoint_opentelemetry_is_never_loaded() -> None:
    probe = (
        "import sys\n"
        "from memory_guard.api.app import create_app\n"
        "from memory_guard.ops.tracing import Tracing\n"
        "from memory_guard.settings import Settings\n"
        "create_app(Settings(_env_file=None, embedding_provider='hashing'))\n"
        "assert not Tracing.configure('').enabled\n"
        "loaded = ('opentelemetry.sdk', 'opentelemetry.exporter')\n"
        "print(sorted(m for m in sys.modules if m.startswith(loaded)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
