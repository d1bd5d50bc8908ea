"""Real answers of the live app against the models their routes declare: every JSON body validates
strictly (no field missing, none unknown, no type coerced) and dumps back to itself, the SSE frames
are the event models named by their `type`, and the fields the staff page and clients read keep
their names and their order."""

from __future__ import annotations

import json
from typing import Annotated, Any

import httpx
import pytest
from fastapi.routing import APIRoute
from pydantic import Field, TypeAdapter

from memory_guard.agent.events import Event
from memory_guard.api import chat as chat_routes
from memory_guard.api import ops, staff, staff_proposals, staff_reports, staff_transfer, v1
from memory_guard.api.responses.errors import ErrorBody
from memory_guard.api.responses.transfer import ImportEvent
from tests.conftest import client_for
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply, ToolCall

ENTRY_FIELDS = [
    "id",
    "question",
    "answer",
    "status",
    "source",
    "agent",
    "project",
    "phase",
    "tags",
    "usage_count",
    "created_at",
    "updated_at",
    "last_used_at",
    "expires_at",
    "embedding_model",
    "metadata",
]
QUESTION = "Quel est le délai de paiement ?"


class Contract:
    """Sends requests by route template and checks each answer against the route's model."""

    def __init__(self) -> None:
        routers = (ops, chat_routes, staff, staff_proposals, staff_reports, staff_transfer, v1)
        self.models = {
            (method, route.path): route.response_model
            for module in routers
            for route in module.router.routes
            if isinstance(route, APIRoute)
            for method in route.methods
        }
        self.checked: set[tuple[str, str]] = set()

    def call(
        self, client: httpx.Client, method: str, template: str, status: int = 200, **options: Any
    ) -> Any:
        params = {k: options.pop(k) for k in list(options) if "{" + k + "}" in template}
        response = client.request(method, template.format(**params), **options)
        assert response.status_code == status, (method, template, response.text)
        if status == 204:
            return None
        model: Any = self.models[method, template] if status < 400 else ErrorBody
        body = response.json()
        validated = TypeAdapter(model).validate_json(response.content, strict=True)
        # Dumped back, the model gives the very body sent: it dropped nothing, added nothing.
        assert json.loads(TypeAdapter(model).dump_json(validated)) == body, (method, template)
        if status < 400:
            self.checked.add((method, template))
        return body


def _events(reply: Any, adapter: TypeAdapter[Any]) -> list[Any]:
    found = []
    for frame in reply.events:
        event = adapter.validate_json(json.dumps(frame.data), strict=True)
        assert event.type == frame.event
        assert event.model_dump(mode="json") == frame.data
        found.append(event)
    return found


CHAT_EVENT = TypeAdapter(Annotated[Event, Field(discriminator="type")])
IMPORT_EVENT = TypeAdapter(Annotated[ImportEvent, Field(discriminator="type")])


def test_every_json_answer_is_its_declared_model(
    live: LiveApp, acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    api = Contract()
    staff, client = acme_staff, acme
    api.call(client, "GET", "/healthz")
    api.call(client, "GET", "/readyz")
    entry = api.call(staff, "POST", "/staff/memory", 201, json={"question": QUESTION, "answer": "30 jours"})
    assert list(entry) == ENTRY_FIELDS
    other = api.call(
        staff, "POST", "/staff/memory", 201, json={"question": "Combien de congés ?", "answer": "25"}
    )
    error = api.call(staff, "POST", "/staff/memory", 409, json={"question": QUESTION, "answer": "x"})
    assert error["error"]["entry_id"] == entry["id"], "an error's own fields stay in its body"
    api.call(staff, "GET", "/staff/memory/{entry_id}", entry_id=entry["id"])
    variants = "/staff/memory/{entry_id}/variants"
    wording = {"question": "Sous combien de jours une facture doit-elle être payée ?"}
    variant = api.call(staff, "POST", variants, 201, entry_id=entry["id"], json=wording)
    api.call(staff, "GET", variants, entry_id=entry["id"])
    assert api.call(staff, "GET", "/staff/memory/{entry_id}", entry_id=entry["id"])["variants"] == [variant]
    ids = {"entry_id": entry["id"], "variant_id": variant["id"]}
    api.call(staff, "POST", variants + "/{variant_id}/validate", **ids)
    through = api.call(staff, "POST", "/staff/memory/lookup", json=wording)["candidates"][0]
    assert through["variant"]["id"] == variant["id"]
    api.call(staff, "DELETE", variants + "/{variant_id}", 204, **ids)
    api.call(staff, "PATCH", "/staff/memory/{entry_id}", entry_id=entry["id"], json={"tags": ["a", "b"]})
    api.call(staff, "POST", "/staff/memory/{entry_id}/obsolete", entry_id=other["id"])
    api.call(staff, "POST", "/staff/memory/{entry_id}/validate", entry_id=other["id"])
    assert "score" not in api.call(staff, "GET", "/staff/memory")["items"][0], "a plain list has no score"
    found = api.call(staff, "GET", "/staff/memory", params={"query": "délai de paiement"})
    assert list(found["items"][0]) == [*ENTRY_FIELDS, "score"]
    lookup = api.call(staff, "POST", "/staff/memory/lookup", json={"question": QUESTION})
    assert lookup["decision"] == "direct"
    assert list(lookup["candidates"][0]) == [
        *("entry_id", "score", "matched_question", "exact", "served", "verdict", "reason"),
        *("probability", "cross_encoder_probability", "by", "reason_code", "reason_params"),
    ]

    direct = chat(client, message=QUESTION)
    assert [e.type for e in _events(direct, CHAT_EVENT)] == ["cached_response", "done"]
    fresh_upstream.push(Reply(tool_calls=[ToolCall("search_memory", {"query": "délai"})]), Reply(text="Oui."))
    learned = chat(client, message="Quelle est la capitale administrative du pays ?")
    kinds = [e.type for e in _events(learned, CHAT_EVENT)]
    assert kinds == ["status", "skill_start", "skill_result", "text", "done"]
    fresh_upstream.push(Reply(status=500))
    assert [e.type for e in _events(chat(client, message="Sans rapport ?"), CHAT_EVENT)] == ["error"]

    completion = {"model": "m", "messages": [{"role": "user", "content": QUESTION}]}
    assert api.call(client, "POST", "/v1/chat/completions", json=completion)["usage"]["total_tokens"] == 0
    api.call(client, "GET", "/v1/models")

    conversation, message = direct.done["conversation_id"], direct.done["message_id"]
    api.call(client, "GET", "/chat/{conversation_id}/messages", conversation_id=conversation)
    feedback = "/chat/{conversation_id}/messages/{message_id}/feedback"
    ids = {"conversation_id": conversation, "message_id": message}
    api.call(client, "POST", feedback, **ids, json={"validated": False, "corrected_answer": "45 jours"})
    proposals = api.call(staff, "GET", "/staff/memory/proposals")
    proposal_id = proposals["items"][0]["id"]
    api.call(staff, "GET", "/staff/memory/proposals/{proposal_id}", proposal_id=proposal_id)
    api.call(staff, "POST", "/staff/memory/proposals/{proposal_id}/accept", proposal_id=proposal_id)
    api.call(client, "POST", feedback, **ids, json={"validated": False, "corrected_answer": "60 jours"})
    pending = api.call(staff, "GET", "/staff/memory/proposals", params={"status": "pending"})
    api.call(
        staff,
        "POST",
        "/staff/memory/proposals/{proposal_id}/reject",
        proposal_id=pending["items"][0]["id"],
        json={"reason": "non"},
    )

    hits = api.call(staff, "GET", "/staff/memory/hits")
    lookup_id = hits["items"][0]["lookup_id"]
    api.call(
        staff, "POST", "/staff/memory/hits/{lookup_id}/review", lookup_id=lookup_id, json={"correct": True}
    )
    stats = api.call(staff, "GET", "/staff/memory/stats", params={"days": 2})
    assert list(stats) == [
        *("entries", "entries_by_source", "lookups", "hit_rate", "llm_calls_avoided", "tokens_saved"),
        *("cost_avoided", "timeline", "served", "judge"),
    ]
    api.call(staff, "GET", "/staff/memory/{entry_id}/usage", entry_id=entry["id"])
    api.call(staff, "GET", "/staff/memory/{entry_id}/history", entry_id=entry["id"])
    audit = api.call(staff, "GET", "/staff/memory/audit")
    edit = next(event for event in audit["items"] if event["before"] is not None)
    api.call(staff, "POST", "/staff/memory/audit/{event_id}/restore", event_id=edit["id"])

    lines = b'{"question": "Q import ?", "answer": "A"}\n{"bad": 1}\n'
    refused = api.call(staff, "POST", "/staff/memory/import", 422, content=lines)
    assert refused["error"]["lines"][0]["line"] == 2
    api.call(staff, "POST", "/staff/memory/import", params={"skip_bad_lines": True}, content=lines)
    api.call(staff, "POST", "/staff/memory/prune")
    api.call(staff, "DELETE", "/staff/memory/{entry_id}", 204, entry_id=other["id"])
    api.call(staff, "GET", "/staff/memory/{entry_id}", 404, entry_id=other["id"])
    api.call(staff, "GET", "/staff/memory", 422, params={"limit": 0})

    json_routes = {key for key, model in api.models.items() if model is not None}
    assert api.checked == json_routes, f"not exercised: {sorted(json_routes - api.checked)}"
    spec = staff.get("/openapi.json").json()
    documented = {
        (method.upper(), path)
        for path, operations in spec["paths"].items()
        for method, operation in operations.items()
        if any(
            "application/json" in r.get("content", {}) for s, r in operation["responses"].items() if s < "3"
        )
    }
    assert documented == json_routes, "every JSON answer of the document was checked here"


def test_the_import_stream_sends_its_event_models(live: LiveApp, acme_staff: httpx.Client) -> None:
    body = b'{"question": "Q2 import ?", "answer": "B"}\n'
    headers = {"Accept": "text/event-stream"}
    with acme_staff.stream("POST", "/staff/memory/import", content=body, headers=headers) as response:
        assert response.status_code == 200
        lines = [line.rstrip("\r") for line in response.iter_lines()]
    frames = [(lines[i].removeprefix("event: "), lines[i + 1].removeprefix("data: ")) for i in (0, 3, 6)]
    events = [IMPORT_EVENT.validate_json(data, strict=True) for _, data in frames]
    assert (
        [name for name, _ in frames] == [event.type for event in events] == ["progress", "progress", "done"]
    )
    assert events[-1].model_dump() == {"type": "done", "imported": 1, "already_present": 0, "skipped": []}


@pytest.mark.parametrize(("key", "status"), [(None, 401), ("ka", 403)])
def test_refusals_are_the_error_body(live: LiveApp, key: str | None, status: int) -> None:
    with client_for(live, key) as client:
        response = client.get("/staff/memory")
    assert response.status_code == status
    ErrorBody.model_validate_json(response.content, strict=True)
