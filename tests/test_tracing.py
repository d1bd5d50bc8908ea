"""Request ids: the client's `X-Request-ID` when it is a plain token, a new one otherwise, on every
answer (errors, 404, 413, the chat stream, the staff page, /metrics, an unhandled 500), and in
the chat stream's `done` and `error` events."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.settings import Settings
from tests.conftest import make_settings
from tests.server import LiveApp, chat
from tests.serving import ThreadedServer
from tests.upstream import FakeUpstream, Reply

GENERATED = re.compile(r"[0-9a-f]{32}")


def _id_of(response: httpx.Response) -> str:
    found = response.headers.get("x-request-id")
    assert found is not None, f"{response.request.method} {response.request.url.path} has no X-Request-ID"
    return found


def test_a_plain_client_id_is_echoed_and_a_missing_one_generated(live: LiveApp) -> None:
    with httpx.Client(base_url=live.base_url) as anonymous:
        given = anonymous.get("/healthz", headers={"X-Request-ID": "trace:42.a_b-C"})
        assert _id_of(given) == "trace:42.a_b-C"
        one, other = _id_of(anonymous.get("/healthz")), _id_of(anonymous.get("/healthz"))
    assert GENERATED.fullmatch(one) and GENERATED.fullmatch(other) and one != other


@pytest.mark.parametrize(
    "bad",
    [
        "x" * 129,  # longer than 128
        "has space",
        'quote"d',
        "a=b",
        "semi;colon",
        "{json}",
        "",
    ],
)
def test_an_id_that_is_not_a_plain_token_is_replaced_never_echoed(live: LiveApp, bad: str) -> None:
    with httpx.Client(base_url=live.base_url) as anonymous:
        answered = _id_of(anonymous.get("/healthz", headers={"X-Request-ID": bad}))
    assert answered != bad
    assert GENERATED.fullmatch(answered)


def test_an_id_of_non_ascii_bytes_is_replaced(live: LiveApp) -> None:
    with httpx.Client(base_url=live.base_url) as anonymous:
        answered = _id_of(anonymous.get("/healthz", headers=[(b"X-Request-ID", "évil\u00a0id".encode())]))
    assert GENERATED.fullmatch(answered)


def test_every_kind_of_answer_carries_the_id(live: LiveApp, fresh_upstream: FakeUpstream) -> None:
    headers = {"X-Request-ID": "req-1"}
    with httpx.Client(base_url=live.base_url, headers=headers, timeout=10) as anonymous:
        answers = [
            anonymous.get("/no/such/route"),  # 404
            anonymous.delete("/healthz"),  # 405
            anonymous.post("/chat", json={"message": "Bonjour ?"}),  # 401: no key
            anonymous.get("/metrics"),
            anonymous.get("/staff/memory/ui"),  # the staff page
            anonymous.get("/openapi.json"),
            anonymous.post("/chat", content=b"x" * (live.settings.max_body_bytes + 1)),  # 413
        ]
    with httpx.Client(base_url=live.base_url, headers={**headers, "Authorization": "Bearer ka"}) as acme:
        answers.append(acme.post("/chat", json={"message": ""}))  # 422 before the stream
        answers.append(acme.post("/chat", content=b"{not json", headers={"content-type": "application/json"}))
        fresh_upstream.push(Reply(text="Un an."))
        with acme.stream("POST", "/chat", json={"message": "Quelle garantie ?"}) as stream:
            stream.read()
            answers.append(stream)
    statuses = [answer.status_code for answer in answers]
    assert statuses == [404, 405, 401, 200, 200, 200, 413, 422, 400, 200]
    assert answers[-1].headers["content-type"].startswith("text/event-stream")
    assert [_id_of(answer) for answer in answers] == ["req-1"] * len(answers)


def test_the_done_event_names_the_request(acme: httpx.Client, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="Un an à compter de la réception."))
    acme.headers["X-Request-ID"] = "miss-1"
    missed = chat(acme, message="Durée de la garantie ?")
    assert missed.done["decision"] == "miss" and missed.done["request_id"] == "miss-1"
    del acme.headers["X-Request-ID"]
    served = chat(acme, message="Durée de la garantie ?")  # no id given: a new one
    assert served.done["decision"] == "direct"
    assert GENERATED.fullmatch(served.done["request_id"])


def test_the_error_event_names_the_request(acme: httpx.Client, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(status=500))
    with acme.stream(
        "POST", "/chat", json={"message": "Une question ?"}, headers={"X-Request-ID": "fails-1"}
    ) as response:
        header = _id_of(response)
        lines = [line for line in response.iter_lines() if line.startswith("data:")]
    assert header == "fails-1"
    assert '"type":"error"' in lines[-1] and '"code":"upstream_error"' in lines[-1]
    assert '"request_id":"fails-1"' in lines[-1]


@pytest.fixture
def failing_app(tmp_path: Path, fresh_upstream: FakeUpstream) -> Iterator[Callable[[], str]]:
    """The real app with one more route that fails unexpectedly, for the framework's 500."""
    from memory_guard.api.app import create_app

    settings: Settings = make_settings(tmp_path, fresh_upstream)
    app: FastAPI = create_app(settings, embedder=HashingEmbedder())

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("a bug")

    server = ThreadedServer(app, lifespan="on")
    server.start(timeout_s=60)
    yield lambda: f"http://127.0.0.1:{server.port}"
    server.stop()


def test_an_unhandled_failure_answers_500_with_the_id(failing_app: Callable[[], str]) -> None:
    with httpx.Client(base_url=failing_app()) as anonymous:
        answer = anonymous.get("/boom", headers={"X-Request-ID": "bug-1"})
    assert answer.status_code == 500
    assert answer.json() == {
        "error": {"code": "internal_error", "message": "something failed on our side; it has been logged"}
    }
    assert _id_of(answer) == "bug-1"


def test_a_browser_page_may_send_the_v1_headers_and_read_the_decision(
    app_factory: Callable[..., LiveApp],
) -> None:
    live = app_factory(cors_origins="https://app.example")
    with httpx.Client(base_url=live.base_url, headers={"Origin": "https://app.example"}) as page:
        preflight = page.options(
            "/v1/chat/completions",
            headers={
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, cache-control, x-memory-guard-project",
            },
        )
        answer = page.get("/healthz")
    assert preflight.status_code == 200
    allowed = preflight.headers["access-control-allow-headers"].lower()
    assert "cache-control" in allowed and "x-memory-guard-project" in allowed
    exposed = answer.headers["access-control-expose-headers"].lower()
    assert "x-memory-guard-decision" in exposed and "x-memory-guard-score" in exposed


def test_a_browser_page_may_send_and_read_the_id(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(cors_origins="https://app.example")
    origin = {"Origin": "https://app.example"}
    with httpx.Client(base_url=live.base_url, headers=origin) as page:
        preflight = page.options(
            "/chat",
            headers={
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, x-request-id",
            },
        )
        answer = page.get("/healthz", headers={"X-Request-ID": "from-page"})
    assert preflight.status_code == 200
    assert "x-request-id" in preflight.headers["access-control-allow-headers"].lower()
    assert _id_of(preflight)
    assert _id_of(answer) == "from-page"
    assert "x-request-id" in answer.headers["access-control-expose-headers"].lower()
