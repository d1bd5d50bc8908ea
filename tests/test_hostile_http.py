"""Hostile HTTP at the edge (issue 11, findings 2 and 9): bodies counted as they arrive, the headers
of staff answers, the methods a path refuses, and what the OpenAPI document declares."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from memory_guard.api.limits import BodyLimit
from tests.conftest import client_for
from tests.server import LiveApp

CHUNK = b"x" * 65_536


class _Body:
    """A chunked request body (no Content-Length) that counts what the client managed to send."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.sent = 0

    def __iter__(self) -> Iterator[bytes]:
        while self.sent < self.total:
            self.sent += len(CHUNK)
            yield CHUNK


def _peak_rss_reset() -> bool:
    """Resets this process's peak RSS (VmHWM); the served app runs in a thread of it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _peak_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/self/status")


@pytest.mark.parametrize("path", ["/chat", "/staff/memory", "/staff/memory/lookup"])
def test_a_chunked_body_without_a_key_is_refused_as_it_arrives(live: LiveApp, path: str) -> None:
    """Before: the whole body was read (and held) before the key was even looked at, then 401."""
    body = _Body(total=32 * 1024 * 1024)
    measured = _peak_rss_reset()
    before = _peak_rss()
    with httpx.Client(base_url=live.base_url, timeout=30) as anonymous:
        response = anonymous.post(path, content=iter(body), headers={"content-type": "application/json"})
    assert response.status_code == 413, response.text
    assert response.json()["error"]["code"] == "payload_too_large"
    assert body.sent < body.total, "the 413 came before the whole body was sent"
    if measured:
        assert _peak_rss() - before < body.total // 4, "the server did not hold the body"


def test_a_chunked_import_is_counted_against_its_own_limit(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(import_max_bytes=256 * 1024, max_body_bytes=2048)
    body = _Body(total=8 * 1024 * 1024)
    with client_for(live, "sa") as staff:
        response = staff.post("/staff/memory/import", content=iter(body))
        assert response.status_code == 413 and response.json()["error"]["code"] == "payload_too_large"
        assert body.sent < body.total
        # The connection was closed; the next request on the same client gets a fresh one.
        assert staff.get("/staff/memory").status_code == 200


def test_a_key_refused_before_the_body_is_read_closes_the_connection(live: LiveApp) -> None:
    """The import route checks the key before reading its body: the rest is not read to be thrown away."""
    body = _Body(total=16 * 1024 * 1024)
    with client_for(live, "ka") as client:
        response = client.post("/staff/memory/import", content=iter(body))
    assert response.status_code == 403
    assert response.headers["connection"] == "close"
    assert body.sent < body.total


def test_bodies_under_the_limit_and_without_length_still_work(acme_staff: httpx.Client) -> None:
    payload = b'{"question": "Quel est le d\\u00e9lai ?", "answer": "30 jours"}'
    response = acme_staff.post(
        "/staff/memory",
        content=iter([payload[:10], payload[10:]]),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 201, response.text
    assert "connection" not in response.headers or response.headers["connection"] != "close"


def test_staff_answers_are_not_cached_nor_sniffed(acme_staff: httpx.Client) -> None:
    entry = acme_staff.post("/staff/memory", json={"question": "Q ?", "answer": "R"}).json()
    for response in [
        acme_staff.get("/staff/memory"),
        acme_staff.get(f"/staff/memory/{entry['id']}"),
        acme_staff.get("/staff/memory/999999"),
        acme_staff.get("/staff/memory/stats"),
        acme_staff.get("/staff/memory/export"),
        acme_staff.patch(f"/staff/memory/{entry['id']}", json={"expires_at": "0001-01-01T00:00:00Z"}),
    ]:
        assert response.headers["cache-control"] == "no-store", response.request.url
        assert response.headers["x-content-type-options"] == "nosniff", response.request.url
    page = acme_staff.get("/staff/memory/ui")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"
    script = acme_staff.get("/staff/memory/ui/main.js")
    assert script.headers["cache-control"] == "no-cache", "the page's files keep their own policy"
    assert script.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("method", ["TRACE", "PUT"])
def test_an_unsupported_method_is_405_with_allow(acme_staff: httpx.Client, method: str) -> None:
    response = acme_staff.request(method, "/staff/memory")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert {"GET", "POST"} <= {m.strip() for m in response.headers["allow"].split(",")}


def test_openapi_declares_errors_ndjson_and_the_bearer_key(acme: httpx.Client) -> None:
    spec = acme.get("/openapi.json").json()
    error = spec["components"]["schemas"]["ErrorBody"]
    assert error["properties"]["error"]["$ref"].endswith("/ErrorDetail")
    assert set(spec["components"]["schemas"]["ErrorDetail"]["required"]) == {"code", "message"}
    for path, method, statuses in [
        ("/chat", "post", {"400", "401", "413", "422"}),
        ("/staff/memory/{entry_id}", "patch", {"401", "403", "404", "422"}),
        ("/staff/memory/import", "post", {"401", "403", "413", "422"}),
    ]:
        responses = spec["paths"][path][method]["responses"]
        assert statuses <= set(responses), (path, method)
        for status in statuses:
            schema = responses[status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (path, status)
        assert spec["paths"][path][method]["security"] == [{"bearer": []}]
    export = spec["paths"]["/staff/memory/export"]["get"]["responses"]["200"]["content"]
    assert list(export) == ["application/x-ndjson"]
    assert spec["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": spec["components"]["securitySchemes"]["bearer"]["description"],
    }
    assert "security" not in spec["paths"]["/healthz"]["get"]
    entry_id = spec["paths"]["/staff/memory/{entry_id}"]["get"]["parameters"][0]["schema"]
    assert entry_id["maximum"] == 2**63 - 1


async def test_a_body_passing_the_limit_after_the_answer_began_is_cut_not_answered_twice() -> None:
    """A streaming request whose answer has begun cannot get a 413: the app sees the client leave."""
    seen: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        while (message := await receive())["type"] == "http.request":
            seen.append("chunk")
        seen.append(message["type"])
        await send({"type": "http.response.body", "body": b"partial", "more_body": False})

    chunks = [{"type": "http.request", "body": b"x" * 600, "more_body": True} for _ in range(10)]

    async def receive() -> Message:
        return chunks.pop(0)

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "path": "/chat", "headers": [(b"transfer-encoding", b"chunked")]}
    await BodyLimit(app, max_bytes=1024)(scope, receive, send)
    assert seen == ["chunk", "http.disconnect"]
    assert [m.get("status") for m in sent if m["type"] == "http.response.start"] == [200]
    assert len(chunks) == 8, "nothing was read past the chunk that crossed the limit"
