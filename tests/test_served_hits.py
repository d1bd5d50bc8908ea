"""Every answer served from memory is logged with its verdict and turns into a wrong-answer rate."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from tests.conftest import client_for
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quel est le délai de la garantie de parfait achèvement ?"
ANSWER = "Un an à compter de la réception."


def _serve(acme: httpx.Client) -> tuple[str, int]:
    """A direct answer; its conversation and message id."""
    reply = chat(acme, message=QUESTION)
    assert reply.done["decision"] == "direct"
    return reply.done["conversation_id"], reply.done["message_id"]


def test_client_feedback_on_served_answers_gives_the_wrong_answer_rate(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    acme_staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER})
    served = [_serve(acme) for _ in range(3)]
    assert fresh_upstream.calls == 0, "direct answers make no LLM call"

    feedback = "/chat/{}/messages/{}/feedback"
    assert acme.post(feedback.format(*served[0]), json={"validated": True}).status_code == 200
    assert acme.post(feedback.format(*served[1]), json={"validated": False}).status_code == 200

    stats = acme_staff.get("/staff/memory/stats").json()["served"]
    assert stats["total"] == 3 and stats["exact"] == 3
    assert stats["reviewed"] == 2 and stats["wrong"] == 1
    assert stats["wrong_rate"] == 0.5
    low, high = stats["wrong_rate_ci95"]
    assert 0.0 < low < 0.5 < high < 1.0

    hits = acme_staff.get("/staff/memory/hits").json()["items"]
    assert [h["review"] for h in hits] == [None, "wrong", "right"], "newest first"
    assert hits[0]["question"] == QUESTION and hits[0]["verdict"] == "exact"
    assert hits[1]["reviewed_by"].startswith("client key "), "the client is named as in the audit trail"


def test_staff_review_of_served_hits(
    acme: httpx.Client, acme_staff: httpx.Client, globex_staff: httpx.Client
) -> None:
    acme_staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER})
    _serve(acme)
    _serve(acme)
    unreviewed = acme_staff.get("/staff/memory/hits", params={"review": "none"}).json()["items"]
    assert len(unreviewed) == 2
    target = unreviewed[0]["lookup_id"]

    assert (
        globex_staff.post(f"/staff/memory/hits/{target}/review", json={"correct": False}).status_code == 404
    )
    assert acme.post(f"/staff/memory/hits/{target}/review", json={"correct": False}).status_code == 403
    response = acme_staff.post(f"/staff/memory/hits/{target}/review", json={"correct": False})
    assert response.json() == {"lookup_id": target, "review": "wrong"}

    wrong = acme_staff.get("/staff/memory/hits", params={"review": "wrong"}).json()["items"]
    assert [h["lookup_id"] for h in wrong] == [target]
    assert wrong[0]["reviewed_by"].startswith("staff key "), "the reviewer is named as in the audit trail"
    assert acme_staff.get("/staff/memory/stats").json()["served"]["wrong"] == 1
    assert globex_staff.get("/staff/memory/hits").json()["items"] == []

    missing = acme_staff.post("/staff/memory/hits/999999/review", json={"correct": True})
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "served_hit_not_found"
    bad = acme_staff.post(f"/staff/memory/hits/{target}/review", json={"correct": "maybe"})
    assert bad.status_code == 422


def test_pages_of_served_hits(acme: httpx.Client, acme_staff: httpx.Client) -> None:
    acme_staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER})
    for _ in range(3):
        _serve(acme)
    first = acme_staff.get("/staff/memory/hits", params={"limit": 2}).json()
    assert len(first["items"]) == 2 and first["next_cursor"]
    rest = acme_staff.get("/staff/memory/hits", params={"limit": 2, "cursor": first["next_cursor"]}).json()
    assert len(rest["items"]) == 1 and rest["next_cursor"] is None
    ids = [h["lookup_id"] for h in first["items"] + rest["items"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 3


STORED = "Quel montant de retenue de garantie sur un marché de 300 000 € TTC ?"
ASKED = "Quel montant de retenue de garantie sur un marché de 3 000 000 € TTC ?"


def test_the_verifier_stops_a_close_score_with_other_numbers(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream, tmp_path: Path
) -> None:
    for verifier, served in (("off", True), ("offline", False)):
        live = app_factory(memory_verifier=verifier, memory_db_path=tmp_path / f"{verifier}.db")
        with client_for(live, "sa") as staff, client_for(live, "ka") as client:
            staff.post("/staff/memory", json={"question": STORED, "answer": "15 000 € (5 %)."})
            lookup = staff.post("/staff/memory/lookup", json={"question": ASKED}).json()
            (candidate,) = lookup["candidates"]
            assert candidate["score"] >= 0.95, "the score alone would serve it"
            assert (lookup["decision"] == "direct") is served
            fresh_upstream.push(Reply(text="150 000 € (5 %)."))
            reply = chat(client, message=ASKED)
            assert (reply.done["decision"] == "direct") is served
        if not served:
            assert candidate["verdict"] == "reject"
            assert candidate["reason"] == "numbers differ: 300 000 vs 3 000 000"
            assert reply.text == "150 000 € (5 %).", "the LLM answered, with the close match as grounding"
            with client_for(live, "sa") as staff:
                assert staff.get("/staff/memory/hits").json()["items"] == []
