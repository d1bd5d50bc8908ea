"""Wordings learned from the assisted path, end to end: the real service on a real SQLite file, and
the fake upstream streaming real `use_memory_answer` tool calls (docs/API.md, "Reusing a memory
answer" and "Question variants")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from memory_guard.memory.learning import LEARNING_ACTOR
from tests.conftest import client_for
from tests.learned import (
    ANSWER,
    ASKED,
    NEAR_ASKED,
    QUESTION,
    TOOL,
    faq,
    feedback,
    learned_entry,
    lookup,
    pick,
    tool_names,
    variants,
)
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply, ToolCall


@pytest.fixture
def app(app_factory: Callable[..., LiveApp]) -> LiveApp:
    # Close enough to ground the LLM, never close enough to be served on similarity alone.
    return app_factory(memory_similarity_threshold=0.5, memory_direct_threshold=0.99)


@pytest.fixture
def acme(app: LiveApp) -> Iterator[httpx.Client]:
    with client_for(app, "ka") as client:
        yield client


@pytest.fixture
def staff(app: LiveApp) -> Iterator[httpx.Client]:
    with client_for(app, "sa") as client:
        yield client


def test_the_tool_is_offered_only_with_grounding(
    acme: httpx.Client, staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="Une réponse."))
    chat(acme, message="Quels financements verts pour une PME agricole au Sénégal ?")
    assert TOOL not in tool_names(fresh_upstream.requests[-1].body), "a miss has nothing to reuse"

    entry_id = faq(staff)
    fresh_upstream.push(Reply(text="Un an."))
    reply = chat(acme, message=ASKED)
    assert reply.done["decision"] == "assisted" and reply.done["reused_entry_id"] is None
    body = fresh_upstream.requests[-1].body
    (tool,) = [t["function"] for t in body["tools"] if t["function"]["name"] == TOOL]
    assert tool["parameters"]["properties"]["entry_id"]["enum"] == [entry_id], "only this grounding's ids"
    assert f"Entrée {entry_id}" in body["messages"][0]["content"], "the prompt names each entry's id"


def test_the_llms_pick_streams_the_stored_answer_and_learns_the_wording(
    acme: httpx.Client, staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    entry_id = learned_entry(acme, fresh_upstream)
    calls_before = len(fresh_upstream.requests)
    pick(fresh_upstream, entry_id)

    reply = chat(acme, message=ASKED)

    assert reply.text == ANSWER, "the stored answer, as it is"
    assert reply.kinds[0] == "memory_context" and reply.kinds[-1] == "done"
    assert reply.of("skill_start") == [
        {"type": "skill_start", "skill": TOOL, "params": {"entry_id": entry_id}}
    ]
    assert len(fresh_upstream.requests) == calls_before + 1, "no further turn: nothing more is generated"
    done = reply.done
    assert (done["decision"], done["reused_entry_id"], done["learned_entry_id"]) == (
        "assisted",
        entry_id,
        None,
    )
    assert done["usage"] == {"prompt_tokens": 300, "completion_tokens": 8}
    (variant,) = variants(staff, entry_id)
    assert variant["id"] == done["learned_variant_id"]
    assert {k: variant[k] for k in ("question", "status", "origin", "confirmations", "created_by")} == {
        "question": ASKED,
        "status": "learned",
        "origin": "llm",
        "confirmations": 1,
        "created_by": LEARNING_ACTOR,
    }
    event = staff.get(f"/staff/memory/{entry_id}/history").json()["items"][0]
    assert (event["action"], event["actor"], event["after"]["variant_id"]) == (
        "add_variant",
        LEARNING_ACTOR,
        variant["id"],
    )
    assert len(staff.get("/staff/memory").json()["items"]) == 1, "nothing new is learned as an entry"
    stats = staff.get("/staff/memory/stats").json()
    assert stats["tokens_saved"] == 50 - 8, "the stored answer's completion, less the pick's"
    messages = acme.get(f"/chat/{done['conversation_id']}/messages").json()["items"]
    assert messages[-1]["content"] == ANSWER and messages[-1]["id"] == done["message_id"]


def test_the_learned_wording_serves_direct_only_once_its_entry_is_validated(
    acme: httpx.Client, staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    auto_id = learned_entry(acme, fresh_upstream)
    pick(fresh_upstream, auto_id)
    chat(acme, message=ASKED)
    found = lookup(staff, ASKED)
    assert found["decision"] == "assisted", "an auto entry's learned wording only grounds the LLM"
    assert found["candidates"][0]["variant"]["held"] is True

    assert staff.post(f"/staff/memory/{auto_id}/validate").status_code == 200
    requests = len(fresh_upstream.requests)
    again = chat(acme, message=ASKED)
    (served,) = again.of("cached_response")
    assert (served["entry_id"], served["matched_question"], served["answer"]) == (auto_id, ASKED, ANSWER)
    assert len(fresh_upstream.requests) == requests, "served from memory: no LLM call"

    near = lookup(staff, NEAR_ASKED)
    best = near["candidates"][0]
    assert best["matched_question"] == ASKED and not best["exact"] and best["score"] > 0.99
    assert near["decision"] == "assisted" and best["variant"]["held"], "by vector only once confirmed"


def test_positive_feedback_confirms_the_wording_and_it_then_serves_by_vector(
    acme: httpx.Client, staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    entry_id = learned_entry(acme, fresh_upstream)
    pick(fresh_upstream, entry_id)
    picked = chat(acme, message=ASKED)
    variant_id = picked.done["learned_variant_id"]
    assert lookup(staff, NEAR_ASKED)["decision"] == "assisted"

    said = feedback(acme, picked, validated=True)

    assert said["variant"] == {"id": variant_id, "outcome": "confirmed"}
    assert (said["outcome"], said["status"]) == ("proposed", "auto"), "the entry's own rule still applies"
    (variant,) = variants(staff, entry_id)
    assert (variant["status"], variant["confirmations"]) == ("learned", 2)
    event = staff.get(f"/staff/memory/{entry_id}/history").json()["items"][0]
    assert (event["action"], event["before"]["confirmations"], event["after"]["confirmations"]) == (
        "confirm_variant",
        1,
        2,
    )
    for question in (ASKED, NEAR_ASKED):
        found = lookup(staff, question)
        assert found["decision"] == "direct" and found["served_entry_id"] == entry_id, question
    assert feedback(acme, picked, validated=True)["variant"] == {"id": variant_id, "outcome": "unchanged"}


def test_negative_feedback_removes_the_learned_wording_and_says_why(
    acme: httpx.Client, staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    entry_id = learned_entry(acme, fresh_upstream)
    pick(fresh_upstream, entry_id)
    picked = chat(acme, message=ASKED)
    variant_id = picked.done["learned_variant_id"]

    said = feedback(acme, picked, validated=False)

    assert said["variant"] == {"id": variant_id, "outcome": "removed"}
    assert (said["outcome"], said["status"]) == ("applied", "auto"), "the entry answered its own question"
    assert variants(staff, entry_id) == []
    event = staff.get(f"/staff/memory/{entry_id}/history").json()["items"][0]
    assert (event["action"], event["before"]["variant_id"], event["after"]) == (
        "reject_variant",
        variant_id,
        None,
    )
    assert event["actor_code"] == "key", "the client who said so"
    best = lookup(staff, ASKED)["candidates"][0]
    assert "variant" not in best and best["matched_question"] == QUESTION, "the wording no longer matches"
    again = feedback(acme, picked, validated=False)
    assert (again["outcome"], again["status"], again["variant"]["outcome"]) == (
        "unchanged",
        "auto",
        "unchanged",
    )


def test_negative_feedback_on_a_direct_answer_served_through_a_learned_wording(
    acme: httpx.Client, staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    entry_id = faq(staff)
    pick(fresh_upstream, entry_id)
    variant_id = chat(acme, message=ASKED).done["learned_variant_id"]
    served = chat(acme, message=ASKED)
    assert served.done["decision"] == "direct"

    said = feedback(acme, served, validated=False)

    assert said["variant"] == {"id": variant_id, "outcome": "removed"}
    assert said["status"] == "validated", "staff's entry is not retired for another wording's answer"
    hit = staff.get("/staff/memory/hits").json()["items"][0]
    assert hit["review"] == "wrong", "the served answer counts as a wrong one"
    assert lookup(staff, ASKED)["decision"] != "direct"
    for _ in range(2):
        assert chat(acme, message=QUESTION).done["decision"] == "direct", "its own question still serves"
    served = staff.get("/staff/memory/stats").json()["served"]
    assert (served["total"], served["wrong"]) == (3, 1)
    assert served["through_variants"] == {
        "total": 1,
        "reviewed": 1,
        "wrong": 1,
        "wrong_rate": 1.0,
        "wrong_rate_ci95": served["through_variants"]["wrong_rate_ci95"],
    }
    usage = staff.get(f"/staff/memory/{entry_id}/usage").json()
    assert usage["lookups"]["direct"] == 3
    assert usage["variant_hits"] == {"direct": 1, "reviewed": 1, "wrong": 1}


def test_an_id_outside_the_grounding_is_refused_and_nothing_is_recorded(
    app: LiveApp, acme: httpx.Client, staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    with client_for(app, "sb") as globex_staff:
        other_tenant = globex_staff.post("/staff/memory", json={"question": ASKED, "answer": "Dix ans."})
        other_id = other_tenant.json()["id"]
        entry_id = faq(staff)
        fresh_upstream.push(
            Reply(tool_calls=[ToolCall(TOOL, {"entry_id": other_id})]),
            Reply(tool_calls=[ToolCall(TOOL, {"entry_id": "douze"})]),
            Reply(text="Un an, en principe."),
        )

        reply = chat(acme, message=ASKED)

        assert reply.text == "Un an, en principe.", "the run goes on with the LLM's own answer"
        errors = [r["result_preview"] for r in reply.of("skill_result") if r["skill"] == TOOL]
        assert len(errors) == 2 and f"entry {other_id} is not one of the entries given" in errors[0]
        tool_turn = fresh_upstream.requests[-2].body["messages"][-1]
        assert tool_turn["role"] == "tool" and "not one of the entries given" in tool_turn["content"]
        assert reply.done["reused_entry_id"] is None and reply.done["learned_variant_id"] is None
        assert variants(staff, entry_id) == []
        assert globex_staff.get(f"/staff/memory/{other_id}/variants").json()["items"] == []
        actions = [e["action"] for e in globex_staff.get("/staff/memory/audit").json()["items"]]
        assert actions == ["create"], "nothing recorded in the other tenant"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (
            {"type": "follow_up", "message": "Et pour la garantie de parfait achèvement d'un VRD ?"},
            "follow_up",
        ),
        ({"message": ASKED, "entreprise": {"nom": "Sahel Agro"}}, "company_specific"),
    ],
)
def test_no_wording_is_learned_where_no_answer_would_be(
    acme: httpx.Client,
    staff: httpx.Client,
    fresh_upstream: FakeUpstream,
    body: dict[str, Any],
    reason: str,
) -> None:
    entry_id = faq(staff)
    if reason == "follow_up":
        fresh_upstream.push(Reply(text="Bonjour."))
        body["conversation_id"] = chat(acme, message="Bonjour, une question sur les garanties.").done[
            "conversation_id"
        ]
        pick(fresh_upstream, entry_id)
    else:  # built on the company's own profile
        fresh_upstream.push(
            Reply(tool_calls=[ToolCall("get_company_profile", {})]),
            Reply(tool_calls=[ToolCall(TOOL, {"entry_id": entry_id})]),
        )

    entries = len(staff.get("/staff/memory").json()["items"])

    reply = chat(acme, **body)

    assert reply.done["decision"] == "assisted" and reply.done["reused_entry_id"] == entry_id
    assert reply.text == ANSWER and reply.done["learned_variant_id"] is None
    assert variants(staff, entry_id) == []
    assert len(staff.get("/staff/memory").json()["items"]) == entries, "nor an entry"


def test_bypass_offers_nothing_to_reuse(
    acme: httpx.Client, staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    entry_id = faq(staff)
    pick(fresh_upstream, entry_id)
    fresh_upstream.push(Reply(text="Un an."))

    reply = chat(acme, message=ASKED, cache="bypass")

    assert TOOL not in tool_names(fresh_upstream.requests[-2].body)
    assert "unknown skill" in reply.of("skill_result")[0]["result_preview"]
    assert reply.text == "Un an." and reply.done["reused_entry_id"] is None
    assert variants(staff, entry_id) == []
