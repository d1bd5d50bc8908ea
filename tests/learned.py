"""What the tests of learned wordings share: the question, its answer and its rewordings, and the
calls that store an entry, make the fake upstream pick it, and read what the service recorded."""

from __future__ import annotations

from typing import Any

import httpx

from tests.server import ChatReply, chat
from tests.upstream import FakeUpstream, Reply, ToolCall

QUESTION = "Quelle est la durée de la garantie de parfait achèvement pour un chantier de VRD ?"
ANSWER = "La garantie de parfait achèvement dure un an à compter de la réception des travaux."
# Close to QUESTION (assisted), and not it.
ASKED = "Combien de temps dure la garantie de parfait achèvement sur un chantier de VRD ?"
# ASKED with a greeting: another exact-match key, the same vector (greetings are not embedded).
NEAR_ASKED = "Bonjour, combien de temps dure la garantie de parfait achèvement sur un chantier de VRD ?"
TOOL = "use_memory_answer"


def faq(staff: httpx.Client, question: str = QUESTION) -> int:
    response = staff.post("/staff/memory", json={"question": question, "answer": ANSWER})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def learned_entry(acme: httpx.Client, upstream: FakeUpstream) -> int:
    """An `auto` entry, learned from a miss whose answer cost 100 + 50 tokens."""
    upstream.push(Reply(text=ANSWER, usage=(100, 50)))
    entry_id = chat(acme, message=QUESTION).done["learned_entry_id"]
    assert isinstance(entry_id, int)
    return entry_id


def pick(upstream: FakeUpstream, entry_id: int, usage: tuple[int, int] = (300, 8)) -> None:
    upstream.push(Reply(tool_calls=[ToolCall(TOOL, {"entry_id": entry_id})], usage=usage))


def lookup(staff: httpx.Client, question: str) -> dict[str, Any]:
    response = staff.post("/staff/memory/lookup", json={"question": question})
    assert response.status_code == 200, response.text
    return dict(response.json())


def variants(staff: httpx.Client, entry_id: int) -> list[dict[str, Any]]:
    response = staff.get(f"/staff/memory/{entry_id}/variants")
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def feedback(client: httpx.Client, reply: ChatReply, **body: Any) -> dict[str, Any]:
    done = reply.done
    url = f"/chat/{done['conversation_id']}/messages/{done['message_id']}/feedback"
    response = client.post(url, json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def tool_names(request_body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request_body.get("tools", [])]
