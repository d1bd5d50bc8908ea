"""The staff routes the foundation needs: entries, lookup, stats, and the index kept in step."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.conftest import client_for
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quel est le taux de la retenue de garantie sur un marché de travaux ?"
ANSWER = "La retenue de garantie est de 5 % du montant du marché."


def _faq(staff: httpx.Client, question: str = QUESTION, answer: str = ANSWER, **extra: object) -> dict:
    response = staff.post("/staff/memory", json={"question": question, "answer": answer, **extra})
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_faq_entry_has_every_field(acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff, tags=["marchés"], project="P1")
    assert set(entry) >= {
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
    }
    assert (entry["status"], entry["source"], entry["project"], entry["tags"]) == (
        "validated",
        "faq",
        "P1",
        ["marchés"],
    )
    assert acme_staff.get(f"/staff/memory/{entry['id']}").json() == entry


def test_pagination_walks_every_entry_once(acme_staff: httpx.Client) -> None:
    ids = {_faq(acme_staff, question=f"{QUESTION} (lot {n})")["id"] for n in range(7)}
    seen: list[int] = []
    cursor = None
    while True:
        params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        page = acme_staff.get("/staff/memory", params=params).json()
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(ids)
    assert seen == sorted(seen, reverse=True), "newest first"
    bad = acme_staff.get("/staff/memory", params={"cursor": "abc"})
    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "invalid_cursor"


def test_filters_and_semantic_query(acme_staff: httpx.Client) -> None:
    first = _faq(acme_staff)
    second = _faq(
        acme_staff, question="Comment calculer l'empreinte carbone d'une PME ?", answer="Scopes 1-2-3."
    )
    acme_staff.patch(f"/staff/memory/{second['id']}", json={"status": "obsolete"})
    obsolete = acme_staff.get("/staff/memory", params={"status": "obsolete"}).json()["items"]
    assert [e["id"] for e in obsolete] == [second["id"]]
    found = acme_staff.get("/staff/memory", params={"query": "empreinte carbone PME"}).json()["items"]
    assert found[0]["id"] == second["id"], "staff search sees obsolete entries too"
    found = acme_staff.get("/staff/memory", params={"query": "retenue de garantie"}).json()["items"]
    assert found[0]["id"] == first["id"]


def test_lookup_has_no_side_effect(acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    result = acme_staff.post("/staff/memory/lookup", json={"question": QUESTION}).json()
    assert result["decision"] == "direct"
    assert result["served_entry_id"] == entry["id"]
    assert result["candidates"][0] == {
        "entry_id": entry["id"],
        "score": 1.0,
        "matched_question": QUESTION,
        "exact": True,
        "served": True,
        "verdict": "exact",
        "reason": "same question",
        "probability": 1.0,
        "cross_encoder_probability": None,
        "by": "exact",
        "reason_code": "exact",
        "reason_params": {},
    }
    assert acme_staff.get(f"/staff/memory/{entry['id']}").json()["usage_count"] == 0
    assert acme_staff.get("/staff/memory/stats").json()["lookups"]["total"] == 0
    miss = acme_staff.post(
        "/staff/memory/lookup", json={"question": "Rien à voir : la météo demain ?"}
    ).json()
    assert miss["decision"] == "miss"


def test_obsolete_and_deleted_entries_leave_the_index(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    entry = _faq(acme_staff)
    near = QUESTION.replace("Quel est", "Quel serait")
    assert acme_staff.post("/staff/memory/lookup", json={"question": near}).json()["candidates"]
    acme_staff.patch(f"/staff/memory/{entry['id']}", json={"status": "obsolete"})
    assert acme_staff.post("/staff/memory/lookup", json={"question": near}).json()["candidates"] == []
    fresh_upstream.push(Reply(text="LLM"))
    missed = chat(acme, message=QUESTION).done
    assert missed["decision"] == "miss"

    # The answer learned meanwhile holds the question: retired, it leaves room for a new FAQ.
    acme_staff.post(f"/staff/memory/{missed['learned_entry_id']}/obsolete").raise_for_status()
    again = _faq(acme_staff, answer="Cinq pour cent.")
    assert chat(acme, message=QUESTION).of("cached_response")[0]["entry_id"] == again["id"]
    assert acme_staff.delete(f"/staff/memory/{again['id']}").status_code == 204
    assert acme_staff.get(f"/staff/memory/{again['id']}").status_code == 404
    assert acme_staff.delete(f"/staff/memory/{again['id']}").status_code == 404
    after = acme_staff.post("/staff/memory/lookup", json={"question": near}).json()["candidates"]
    assert all(c["entry_id"] != again["id"] for c in after)


def test_patch_answer_is_served_and_validation_errors(acme: httpx.Client, acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    patched = acme_staff.patch(
        f"/staff/memory/{entry['id']}", json={"answer": "Cinq pour cent.", "tags": ["x"]}
    )
    assert patched.json()["answer"] == "Cinq pour cent."
    assert patched.json()["updated_at"] > entry["updated_at"]
    assert chat(acme, message=QUESTION).of("cached_response")[0]["answer"] == "Cinq pour cent."
    assert acme_staff.patch(f"/staff/memory/{entry['id']}", json={"status": "maybe"}).status_code == 422
    assert acme_staff.patch(f"/staff/memory/{entry['id']}", json={"answer": ""}).status_code == 422
    assert acme_staff.patch("/staff/memory/424242", json={"status": "obsolete"}).status_code == 404
    assert acme_staff.post("/staff/memory", json={"question": "sans réponse"}).status_code == 422
    assert acme_staff.get("/staff/memory/not-a-number").status_code == 422


def test_stats_count_entries_and_decisions(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    _faq(acme_staff)
    fresh_upstream.push(Reply(text="Quatre semaines.", usage=(100, 20)))
    chat(acme, message=QUESTION)
    chat(acme, message="Quel est le délai de préavis pour résilier un marché public ?")
    stats = acme_staff.get("/staff/memory/stats").json()
    assert stats["entries"] == {"auto": 1, "validated": 1, "obsolete": 0, "total": 2}
    assert stats["lookups"] == {"total": 2, "direct": 1, "assisted": 0, "miss": 1}
    assert stats["hit_rate"] == 0.5
    assert stats["llm_calls_avoided"] == 1


def test_agents_file_gives_identity_and_refuses_unknown_agents(
    tmp_path: Path, app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    agents = tmp_path / "agents.json"
    agents.write_text(
        json.dumps(
            {
                "esg": {
                    "identity": "Tu es ESG Mefali, conseiller en finance durable.",
                    "rules": ["Cite tes sources."],
                }
            }
        )
    )
    live = app_factory(agents_file=agents)
    with client_for(live, "ka") as acme:
        fresh_upstream.push(Reply(text="Réponse ESG."))
        assert chat(acme, message=QUESTION, agent="esg").done["decision"] == "miss"
        system = fresh_upstream.requests[-1].body["messages"][0]["content"]
        assert system.startswith("Tu es ESG Mefali")
        assert "- Cite tes sources." in system
        unknown = acme.post("/chat", json={"message": QUESTION, "agent": "vrd"})
        assert unknown.status_code == 422
        assert unknown.json()["error"]["code"] == "unknown_agent"
        assert "esg" in unknown.json()["error"]["message"]


def test_a_learned_answer_rewritten_by_staff_becomes_a_staff_answer(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="Quatre pour cent."))
    learned = chat(acme, message=QUESTION).done["learned_entry_id"]
    assert acme_staff.get(f"/staff/memory/{learned}").json()["source"] == "learned"
    tagged = acme_staff.patch(f"/staff/memory/{learned}", json={"tags": ["marchés"]}).json()
    assert tagged["source"] == "learned"
    rewritten = acme_staff.patch(
        f"/staff/memory/{learned}", json={"answer": ANSWER, "status": "validated"}
    ).json()
    assert (rewritten["source"], rewritten["status"], rewritten["answer"]) == ("staff", "validated", ANSWER)
