"""The OpenAPI document says what the API really does: a schema for every JSON answer, the key on
every route that reads it, our error body for every error (422 included), and each event of the
chat stream."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory_guard.agent.events import CHAT_EVENTS
from memory_guard.api.responses.transfer import IMPORT_EVENTS
from tests.server import LiveApp

ERROR_BODY = {"$ref": "#/components/schemas/ErrorBody"}
# The OpenAI-compatible routes answer errors in OpenAI's shape, and 400 where the others say 422.
OPENAI_ERROR_BODY = {"$ref": "#/components/schemas/OpenAIErrorBody"}
# Answers that are not JSON, each with its one media type.
NOT_JSON = {
    ("/chat", "post"): "text/event-stream",
    ("/chat/{conversation_id}/message", "post"): "text/event-stream",
    ("/staff/memory/export", "get"): "application/x-ndjson",
    ("/metrics", "get"): "text/plain; version=1.0.0; charset=utf-8",
}
PUBLIC = {"/healthz", "/readyz", "/metrics"}


@pytest.fixture
def spec(live: LiveApp) -> dict[str, Any]:
    response = httpx.get(f"{live.base_url}/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, ops in spec["paths"].items() for method, op in ops.items()]


def _success(operation: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (status,) = [s for s in operation["responses"] if s.startswith("2")]
    return status, operation["responses"][status]


def _component(spec: dict[str, Any], ref: str) -> dict[str, Any]:
    prefix = "#/components/schemas/"
    assert ref.startswith(prefix), ref
    found: dict[str, Any] = spec["components"]["schemas"][ref.removeprefix(prefix)]
    return found


def test_every_json_answer_has_a_schema_of_its_own(spec: dict[str, Any]) -> None:
    operations = _operations(spec)
    assert len(operations) >= 29
    for path, method, operation in operations:
        status, success = _success(operation)
        if status == "204":
            assert "content" not in success, (path, method)
            continue
        content = success["content"]
        if (path, method) in NOT_JSON:
            assert NOT_JSON[path, method] in content, (path, method, list(content))
            continue
        schema = content["application/json"]["schema"]
        model = _component(spec, schema["$ref"])
        assert model["type"] == "object" and model["properties"], (path, method)
        # A response model lists every field it sends: a key the model does not know is no answer.
        assert model["additionalProperties"] is False, (path, method)


def test_every_keyed_operation_lists_the_bearer_scheme(spec: dict[str, Any]) -> None:
    schemes = spec["components"]["securitySchemes"]
    assert schemes["bearer"]["type"] == "http" and schemes["bearer"]["scheme"] == "bearer"
    assert schemes["metrics_token"]["type"] == "http" and schemes["metrics_token"]["scheme"] == "bearer"
    for path, method, operation in _operations(spec):
        if path in PUBLIC:
            expected = [{"metrics_token": []}] if path == "/metrics" else None
            assert operation.get("security") == expected, (path, method)
        else:
            assert operation["security"] == [{"bearer": []}], (path, method)
            assert {"401"} <= set(operation["responses"]), (path, method)


def test_the_declared_key_is_the_one_asked_for(spec: dict[str, Any], live: LiveApp) -> None:
    """Every operation that lists the scheme refuses a request without a key; the others do not."""
    with httpx.Client(base_url=live.base_url) as anonymous:
        for path, method, operation in _operations(spec):
            url = path.replace("{conversation_id}", "c1").replace("{", "").replace("}", "")
            for name in ("entry_id", "event_id", "lookup_id", "proposal_id", "message_id"):
                url = url.replace(name, "1")
            status = anonymous.request(method, url, json={}).status_code
            if operation.get("security") == [{"bearer": []}]:
                assert status == 401, (method, path, status)
            else:
                assert status == 200, (method, path, status)


def test_every_error_answer_is_our_error_body_and_422_is_ours(spec: dict[str, Any]) -> None:
    names = set(spec["components"]["schemas"])
    assert not names & {"HTTPValidationError", "ValidationError"}, "FastAPI's 422 body, which we never send"
    detail = spec["components"]["schemas"]["ErrorDetail"]
    assert set(detail["required"]) == {"code", "message"}
    assert detail.get("additionalProperties", True) is not False, "some codes add fields (entry_id, lines)"
    for path, method, operation in _operations(spec):
        errors = {s: r for s, r in operation["responses"].items() if s[0] in "45"}
        body = ERROR_BODY
        if path.startswith("/v1/"):
            assert set(errors) == {"400", "401", "413", "5XX"}, (path, method)
            body = OPENAI_ERROR_BODY
        elif path not in PUBLIC:
            assert {"400", "401", "404", "413", "422", "5XX"} <= set(errors), (path, method)
        for status, answer in errors.items():
            assert answer["content"] == {"application/json": {"schema": body}}, (path, method, status)
    assert "503" in spec["paths"]["/readyz"]["get"]["responses"]


def _frames(content: dict[str, Any]) -> dict[str, str]:
    """The events of a text/event-stream answer: each frame's `event` name and its `data` model."""
    frames = content["text/event-stream"]["schema"]["oneOf"]
    events = {}
    for frame in frames:
        assert frame["required"] == ["event", "data"]
        data = frame["properties"]["data"]
        assert data["contentMediaType"] == "application/json"
        events[frame["properties"]["event"]["const"]] = data["contentSchema"]["$ref"]
    assert len(events) == len(frames)
    return events


@pytest.mark.parametrize("path", ["/chat", "/chat/{conversation_id}/message"])
def test_the_chat_stream_documents_each_event(spec: dict[str, Any], path: str) -> None:
    _, success = _success(spec["paths"][path]["post"])
    assert list(success["content"]) == ["text/event-stream"]
    events = _frames(success["content"])
    assert set(events) == {
        "text",
        "status",
        "skill_start",
        "skill_result",
        "memory_context",
        "cached_response",
        "done",
        "error",
    }
    assert len(events) == len(CHAT_EVENTS)
    for name, ref in events.items():
        event = _component(spec, ref)
        assert event["properties"]["type"]["const"] == name
        assert "type" in event["required"] and event["additionalProperties"] is False
    done = _component(spec, events["done"])
    assert {"conversation_id", "message_id", "decision", "learned_entry_id", "usage"} <= set(done["required"])
    assert _component(spec, done["properties"]["decision"]["$ref"])["enum"] == ["direct", "assisted", "miss"]


def test_the_import_documents_its_report_and_its_stream(spec: dict[str, Any]) -> None:
    _, success = _success(spec["paths"]["/staff/memory/import"]["post"])
    assert success["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ImportReport"}
    assert (
        set(_frames(success["content"]))
        == {"progress", "done", "error"}
        == {event.model_fields["type"].default for event in IMPORT_EVENTS}
    )


def test_conflicts_are_declared_where_they_happen(spec: dict[str, Any]) -> None:
    """duplicate_question on the writes of an entry, not_an_answer and nothing_learned on feedback."""
    for path, method in [
        ("/staff/memory", "post"),
        ("/staff/memory/{entry_id}", "patch"),
        ("/staff/memory/audit/{event_id}/restore", "post"),
        ("/chat/{conversation_id}/messages/{message_id}/feedback", "post"),
        ("/staff/memory/proposals/{proposal_id}/accept", "post"),
    ]:
        assert "409" in spec["paths"][path][method]["responses"], (path, method)
