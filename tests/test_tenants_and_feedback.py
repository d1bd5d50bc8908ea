"""Tenant isolation, scopes, feedback and expiry, over HTTP."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.conftest import client_for
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quels documents faut-il pour la réception provisoire d'un ouvrage d'assainissement ?"
ANSWER = "Le procès-verbal de réception, les plans de récolement et le DOE."


def test_tenant_b_never_hits_or_sees_tenant_a(
    acme: httpx.Client,
    acme_staff: httpx.Client,
    globex: httpx.Client,
    globex_staff: httpx.Client,
    fresh_upstream: FakeUpstream,
) -> None:
    fresh_upstream.push(Reply(text=ANSWER), Reply(text="Réponse de Globex."))
    learned = chat(acme, message=QUESTION)
    entry_id = learned.done["learned_entry_id"]
    conversation = learned.done["conversation_id"]

    other = chat(globex, message=QUESTION)

    assert other.done["decision"] == "miss", "tenant B must not be served tenant A's answer"
    assert other.text == "Réponse de Globex."
    assert [e["id"] for e in globex_staff.get("/staff/memory").json()["items"]] == [
        other.done["learned_entry_id"]
    ]
    assert globex_staff.get(f"/staff/memory/{entry_id}").status_code == 404
    assert globex_staff.patch(f"/staff/memory/{entry_id}", json={"status": "obsolete"}).status_code == 404
    assert globex_staff.delete(f"/staff/memory/{entry_id}").status_code == 404
    lookup = globex_staff.post("/staff/memory/lookup", json={"question": QUESTION}).json()
    assert all(c["entry_id"] != entry_id for c in lookup["candidates"])
    assert globex.get(f"/chat/{conversation}/messages").status_code == 404
    assert globex.post(f"/chat/{conversation}/message", json={"message": "et alors ?"}).status_code == 404
    assert globex_staff.get("/staff/memory/stats").json()["entries"]["total"] == 1
    # Tenant A's entry is untouched by B's attempts.
    assert acme_staff.get(f"/staff/memory/{entry_id}").json()["status"] == "auto"


def test_scope_separates_agents_projects_and_phases(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    acme_staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER, "project": "P1"})
    fresh_upstream.push(Reply(text="a"), Reply(text="b"), Reply(text="c"))
    assert chat(acme, message=QUESTION, project="P1").done["decision"] == "direct"
    assert chat(acme, message=QUESTION).done["decision"] == "miss", "an empty project matches only empty"
    assert chat(acme, message=QUESTION, project="P1", phase="DCE").done["decision"] == "miss"
    assert chat(acme, message=QUESTION, project="P1", agent="esg").done["decision"] == "miss"


def test_feedback_validates_corrects_and_obsoletes(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="Une réponse approximative."))
    run = chat(acme, message=QUESTION).done
    base = f"/chat/{run['conversation_id']}/messages/{run['message_id']}/feedback"

    # A client proposes; staff decide (memory/proposal.py): a yes and a correction change nothing yet.
    validated = acme.post(base, json={"validated": True}).json()
    assert validated == {
        "entry_id": run["learned_entry_id"],
        "status": "auto",
        "outcome": "proposed",
        "proposal_id": validated["proposal_id"],
        "variant": None,
    }
    corrected = acme.post(base, json={"validated": True, "corrected_answer": ANSWER}).json()
    assert (corrected["status"], corrected["outcome"]) == ("auto", "proposed")
    assert chat(acme, message=QUESTION).of("cached_response")[0]["answer"] == "Une réponse approximative."

    accept = f"/staff/memory/proposals/{corrected['proposal_id']}/accept"
    assert acme_staff.post(accept).status_code == 200
    served = chat(acme, message=QUESTION)
    assert served.of("cached_response")[0]["answer"] == ANSWER
    assert served.of("cached_response")[0]["status"] == "validated"

    # Feedback on the direct answer reaches the entry that was served; now validated, a "no" waits too.
    direct = served.done
    refused = acme.post(
        f"/chat/{direct['conversation_id']}/messages/{direct['message_id']}/feedback",
        json={"validated": False},
    ).json()
    assert (refused["entry_id"], refused["status"], refused["outcome"]) == (
        run["learned_entry_id"],
        "validated",
        "proposed",
    )
    assert chat(acme, message=QUESTION).done["decision"] == "direct"
    accept = f"/staff/memory/proposals/{refused['proposal_id']}/accept"
    assert acme_staff.post(accept).json()["status"] == "accepted"
    fresh_upstream.push(Reply(text="Nouvelle réponse."))
    after = chat(acme, message=QUESTION)
    assert after.done["decision"] == "miss", "an obsolete entry is never served"


def test_feedback_errors(acme: httpx.Client, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="x", finish_reason="length"))
    run = chat(acme, message=QUESTION).done
    conversation, message = run["conversation_id"], run["message_id"]
    nothing = acme.post(f"/chat/{conversation}/messages/{message}/feedback", json={"validated": True})
    assert nothing.status_code == 409
    assert nothing.json()["error"]["code"] == "nothing_learned"
    assert "truncated" in nothing.json()["error"]["message"]
    question = acme.post(f"/chat/{conversation}/messages/{message - 1}/feedback", json={"validated": True})
    assert question.status_code == 409
    missing = acme.post(f"/chat/{conversation}/messages/999999/feedback", json={"validated": True})
    assert missing.status_code == 404
    bad = acme.post(f"/chat/{conversation}/messages/{message}/feedback", json={"validated": "perhaps"})
    assert bad.status_code == 422


def test_expired_entries_are_never_served_and_get_pruned(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(memory_max_age_days=0.00001)  # under a second
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        entry = staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER}).json()
        import time

        time.sleep(1.1)
        fresh_upstream.push(Reply(text="Fresh."))
        reply = chat(acme, message=QUESTION)
        assert reply.done["decision"] == "miss"
        assert staff.get(f"/staff/memory/{entry['id']}").status_code == 404, "auto-prune removed it"


def test_prune_route_counts_removed_entries(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(memory_max_age_days=0.00001, memory_auto_prune=False)
    with client_for(live, "sa") as staff:
        for n in range(3):
            staff.post("/staff/memory", json={"question": f"{QUESTION} {n}", "answer": ANSWER})
        import time

        time.sleep(1.1)
        assert staff.post("/staff/memory/prune").json() == {"removed": 3}
        assert staff.get("/staff/memory").json()["items"] == []


def test_follow_up_that_leans_on_context_is_not_answered_direct(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    acme_staff.post(
        "/staff/memory", json={"question": "Et pour le Sénégal ?", "answer": "Réponse hors contexte."}
    )
    fresh_upstream.push(Reply(text=ANSWER), Reply(text="Au Sénégal, la même liste s'applique."))
    first = chat(acme, message=QUESTION).done
    follow = chat(acme, f"/chat/{first['conversation_id']}/message", message="Et pour le Sénégal ?")
    assert follow.done["decision"] != "direct"
    assert follow.text == "Au Sénégal, la même liste s'applique."


def test_search_memory_skill_sees_only_its_own_scope(
    acme_staff: httpx.Client, globex: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    from tests.upstream import ToolCall

    acme_staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER})
    fresh_upstream.push(
        Reply(tool_calls=[ToolCall("search_memory", {"query": QUESTION, "limit": 5})]),
        Reply(text="Rien."),
        Reply(tool_calls=[ToolCall("search_memory", {"query": QUESTION, "limit": 5})]),
        Reply(text="Trouvé."),
    )
    chat(globex, message="Liste des pièces pour la réception ?")
    globex_result = next(m for m in fresh_upstream.requests[1].body["messages"] if m["role"] == "tool")
    assert globex_result["content"] == "[]"
    with client_for_key(acme_staff, "ka") as acme:
        chat(acme, message="Liste des pièces pour la réception ?")
    acme_result = next(m for m in fresh_upstream.requests[3].body["messages"] if m["role"] == "tool")
    assert ANSWER in acme_result["content"]


def client_for_key(other: httpx.Client, key: str) -> httpx.Client:
    return httpx.Client(base_url=other.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=10)
