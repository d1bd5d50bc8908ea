"""Bad input gets a clear 4xx JSON error; upstream failures end the stream with `error`."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.conftest import client_for, make_settings
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quel est le délai de paiement des situations de travaux dans un marché public ?"


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    return str(body["error"]["message"])


def test_bad_json_is_400(acme: httpx.Client) -> None:
    response = acme.post("/chat", content=b'{"message": ', headers={"content-type": "application/json"})
    _error(response, 400, "invalid_json")


def test_missing_message_is_422_naming_the_field(acme: httpx.Client) -> None:
    message = _error(acme.post("/chat", json={"agent": "x"}), 422, "invalid_request")
    assert "message" in message


@pytest.mark.parametrize("text", ["", "   \n"])
def test_empty_message_is_refused(acme: httpx.Client, text: str) -> None:
    _error(acme.post("/chat", json={"message": text}), 422, "empty_message")


def test_oversized_message_is_refused(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(max_message_chars=100)
    with client_for(live, "ka") as acme:
        message = _error(acme.post("/chat", json={"message": "x" * 101}), 422, "message_too_long")
    assert "100" in message


def test_oversized_body_is_413(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(max_body_bytes=2048)
    with client_for(live, "ka") as acme:
        _error(acme.post("/chat", json={"message": "x" * 5000}), 413, "payload_too_large")


def test_bad_enum_is_422(acme: httpx.Client) -> None:
    message = _error(
        acme.post("/chat", json={"message": "hello there", "cache": "sometimes"}), 422, "invalid_request"
    )
    assert "cache" in message


def test_unknown_conversation_is_404(acme: httpx.Client) -> None:
    _error(acme.post("/chat/nope/message", json={"message": QUESTION}), 404, "conversation_not_found")
    _error(
        acme.post("/chat", json={"message": QUESTION, "conversation_id": "nope"}),
        404,
        "conversation_not_found",
    )
    _error(acme.get("/chat/nope/messages"), 404, "conversation_not_found")


def test_keys_are_checked(live: LiveApp) -> None:
    with client_for(live, None) as anonymous:
        _error(anonymous.post("/chat", json={"message": QUESTION}), 401, "missing_key")
        _error(anonymous.get("/staff/memory"), 401, "missing_key")
    with client_for(live, "wrong") as wrong:
        _error(wrong.post("/chat", json={"message": QUESTION}), 401, "invalid_key")
    with client_for(live, "ka") as acme:
        _error(acme.get("/staff/memory"), 403, "staff_only")
        _error(acme.post("/staff/memory/prune"), 403, "staff_only")


def test_unknown_route_and_method_are_json(acme: httpx.Client) -> None:
    _error(acme.get("/nothing-here"), 404, "not_found")
    _error(acme.get("/chat"), 405, "method_not_allowed")


def _learned_nothing(staff: httpx.Client) -> None:
    assert staff.get("/staff/memory").json()["items"] == []


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (Reply(status=500), "upstream_error"),
        (Reply(status=429), "upstream_error"),
        (Reply(hang=True), "upstream_timeout"),
        (Reply(text="La réponse commence bien puis", cut_after_chunks=4), "upstream_error"),
    ],
    ids=["http-500", "http-429", "timeout", "cut-stream"],
)
def test_upstream_failure_ends_with_error_and_learns_nothing(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream, reply: Reply, code: str
) -> None:
    fresh_upstream.push(reply)

    failed = chat(acme, message=QUESTION)

    assert failed.status == 200
    assert failed.kinds[-1] == "error"
    assert "done" not in failed.kinds
    assert failed.of("error")[0]["code"] == code
    _learned_nothing(acme_staff)
    fresh_upstream.release()
    # Nothing of the failed run is in any history, and the service keeps serving.
    fresh_upstream.push(Reply(text="Trente jours."))
    ok = chat(acme, message=QUESTION)
    assert ok.done["decision"] == "miss"
    assert ok.text == "Trente jours."


def test_truncated_answer_is_not_learned(acme: httpx.Client, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="Le délai est de", finish_reason="length"))
    reply = chat(acme, message=QUESTION)
    assert reply.done["learned_entry_id"] is None


def test_invalid_marker_is_not_learned(acme: httpx.Client, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="<non valide> je ne peux pas répondre"))
    assert chat(acme, message=QUESTION).done["learned_entry_id"] is None


def test_bypass_neither_looks_up_nor_learns(acme: httpx.Client, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="Trente jours."), Reply(text="Trente jours, toujours."))
    assert chat(acme, message=QUESTION).done["learned_entry_id"] is not None
    bypass = chat(acme, message=QUESTION, cache="bypass")
    assert bypass.done["decision"] == "miss"
    assert bypass.done["learned_entry_id"] is None
    assert fresh_upstream.calls == 2


def test_refresh_skips_lookup_and_replaces_the_answer(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="Trente jours."), Reply(text="Quarante-cinq jours depuis 2026."))
    first = chat(acme, message=QUESTION).done["learned_entry_id"]
    refreshed = chat(acme, message=QUESTION, cache="refresh")
    assert refreshed.done["decision"] == "miss"
    assert refreshed.done["learned_entry_id"] == first
    assert acme_staff.get(f"/staff/memory/{first}").json()["answer"] == "Quarante-cinq jours depuis 2026."
    served = chat(acme, message=QUESTION)
    assert served.of("cached_response")[0]["answer"] == "Quarante-cinq jours depuis 2026."


def test_client_disconnect_learns_nothing_and_stops_the_upstream(
    live: LiveApp, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=" ".join(["mot"] * 200), chunk_delay_s=0.05))
    with client_for(live, "ka") as acme, acme.stream("POST", "/chat", json={"message": QUESTION}) as response:
        for line in response.iter_lines():
            if line.startswith("event: text"):
                break
    deadline = time.monotonic() + 5
    while not fresh_upstream.requests[0].disconnected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fresh_upstream.requests[0].disconnected, "the upstream stream must be cancelled"
    assert not fresh_upstream.requests[0].completed
    _learned_nothing(acme_staff)
    fresh_upstream.push(Reply(text="Trente jours."))
    with client_for(live, "ka") as acme:
        assert chat(acme, message=QUESTION).done["learned_entry_id"] is not None


def test_turn_limit_is_an_error(app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream) -> None:
    from tests.upstream import ToolCall

    live = app_factory(agent_max_turns=2)
    fresh_upstream.push(*[Reply(tool_calls=[ToolCall("search_memory", {"query": "x"})]) for _ in range(2)])
    with client_for(live, "ka") as acme:
        reply = chat(acme, message=QUESTION)
    assert reply.kinds[-1] == "error"
    assert reply.of("error")[0]["code"] == "agent_turn_limit"


def test_bad_tool_arguments_are_reported_to_the_llm(acme: httpx.Client, fresh_upstream: FakeUpstream) -> None:
    from tests.upstream import ToolCall

    fresh_upstream.push(
        Reply(tool_calls=[ToolCall("search_memory", {"limit": 3})]), Reply(text="Je n'ai rien trouvé.")
    )
    reply = chat(acme, message=QUESTION)
    assert reply.done["decision"] == "miss"
    tool_message = next(m for m in fresh_upstream.requests[1].body["messages"] if m["role"] == "tool")
    assert "invalid arguments" in tool_message["content"] and "query" in tool_message["content"]


def test_embeddings_outage_answers_without_memory(tmp_path: Path, fresh_upstream: FakeUpstream) -> None:
    from tests.fakes import UnreachableEmbedder

    live = LiveApp(make_settings(tmp_path, fresh_upstream), embedder=UnreachableEmbedder()).start()
    try:
        fresh_upstream.push(Reply(text="Trente jours."))
        with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
            reply = chat(acme, message=QUESTION)
            assert reply.kinds[0] == "status"
            assert reply.text == "Trente jours."
            assert reply.done["decision"] == "miss"
            assert reply.done["learned_entry_id"] is None
            run = reply.done
            why = acme.post(
                f"/chat/{run['conversation_id']}/messages/{run['message_id']}/feedback",
                json={"validated": True},
            ).json()
            assert "embedding_unavailable" in why["error"]["message"]
            created = staff.post("/staff/memory", json={"question": QUESTION, "answer": "x"})
            assert created.status_code == 502
            assert created.json()["error"]["code"] == "upstream_error"
    finally:
        live.stop()
