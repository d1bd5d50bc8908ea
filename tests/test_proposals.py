"""Client feedback never rewrites shared memory by itself: corrections (and a "no" on what staff
vouched for) become proposals that staff accept or reject, over HTTP against the live app."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.server import chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quelle est la durée de la garantie de parfait achèvement ?"
ANSWER = "Un an à compter de la réception des travaux."
POISON = "Aucune garantie : ne payez rien et contactez https://arnaque.example."
LEARNED = "Un an, en principe."


def _actor(key: str, role: str) -> str:
    """How the audit trail names a key with no name of its own (never the key itself)."""
    return f"{role} key {hashlib.sha256(key.encode()).hexdigest()[:8]}"


CLIENT = _actor("ka", "client")
STAFF = _actor("sa", "staff")


def _served(client: httpx.Client) -> dict[str, Any]:
    reply = chat(client, message=QUESTION)
    assert reply.done["decision"] == "direct"
    (cached,) = reply.of("cached_response")
    return {**reply.done, "answer": cached["answer"]}


def _feedback(client: httpx.Client, run: dict[str, Any], **body: Any) -> httpx.Response:
    return client.post(f"/chat/{run['conversation_id']}/messages/{run['message_id']}/feedback", json=body)


def _faq(staff: httpx.Client) -> dict[str, Any]:
    created = staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER})
    assert created.status_code == 201, created.text
    return dict(created.json())


def test_a_client_correction_of_a_staff_faq_waits_for_staff(
    acme: httpx.Client, acme_staff: httpx.Client
) -> None:
    faq = _faq(acme_staff)
    run = _served(acme)
    assert run["answer"] == ANSWER

    corrected = _feedback(acme, run, validated=False, corrected_answer=POISON)
    assert corrected.status_code == 200, corrected.text
    body = corrected.json()
    assert body["outcome"] == "proposed" and isinstance(body["proposal_id"], int)
    assert body == {
        "entry_id": faq["id"],
        "status": "validated",
        "outcome": "proposed",
        "proposal_id": body["proposal_id"],
        "variant": None,
    }
    retire = _feedback(acme, run, validated=False).json()
    assert retire["outcome"] == "proposed" and retire["proposal_id"] != body["proposal_id"]

    # The finding: the next asker got the client's text. Now the staff's answer stands, still served.
    assert _served(acme)["answer"] == ANSWER
    entry = acme_staff.get(f"/staff/memory/{faq['id']}").json()
    assert (entry["answer"], entry["status"]) == (ANSWER, "validated")
    history = acme_staff.get(f"/staff/memory/{faq['id']}/history").json()["items"]
    assert [e["action"] for e in history] == ["create"], "no change was made to the entry"

    pending = acme_staff.get("/staff/memory/proposals", params={"status": "pending"}).json()
    assert [p["id"] for p in pending["items"]] == [retire["proposal_id"], body["proposal_id"]]
    proposal = acme_staff.get(f"/staff/memory/proposals/{body['proposal_id']}").json()
    assert proposal["kind"] == "correct" and proposal["proposed_answer"] == POISON
    assert proposal["proposed_by"] == CLIENT, "named by the digest of the key, never the key"
    assert "ka" not in proposal["proposed_by"].split()
    assert proposal["entry_id"] == faq["id"] and proposal["message_id"] == run["message_id"]
    assert proposal["conversation_id"] == run["conversation_id"]
    assert proposal["base_answer"] == ANSWER and proposal["entry"]["answer"] == ANSWER
    assert proposal["status"] == "pending" and proposal["entry_changed"] is False
    assert pending["items"][0]["kind"] == "retire" and pending["items"][0]["proposed_answer"] is None

    # The served answers still measure the guard: both feedbacks reviewed it wrong, by the client.
    (hit,) = acme_staff.get("/staff/memory/hits", params={"review": "wrong"}).json()["items"][-1:]
    assert hit["reviewed_by"] == CLIENT

    rejected = acme_staff.post(
        f"/staff/memory/proposals/{retire['proposal_id']}/reject", json={"reason": "toujours valable"}
    )
    assert rejected.status_code == 200, rejected.text
    assert rejected.json()["status"] == "rejected" and rejected.json()["reason"] == "toujours valable"
    assert rejected.json()["decided_by"] == STAFF
    assert _served(acme)["answer"] == ANSWER, "a rejected proposal changes nothing"

    accepted = acme_staff.post(f"/staff/memory/proposals/{body['proposal_id']}/accept")
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["status"] == "accepted" and accepted.json()["decided_by"] == STAFF
    assert _served(acme)["answer"] == POISON, "once staff accept it, the correction is served"

    event = acme_staff.get(f"/staff/memory/{faq['id']}/history").json()["items"][0]
    assert event["actor"] == STAFF and event["proposal_id"] == body["proposal_id"]
    assert (event["before"]["answer"], event["after"]["answer"]) == (ANSWER, POISON)
    assert accepted.json()["audit_event_id"] == event["id"]
    after = acme_staff.get(f"/staff/memory/{faq['id']}").json()
    assert (after["status"], after["source"]) == ("validated", "faq")

    again = acme_staff.post(f"/staff/memory/proposals/{body['proposal_id']}/accept")
    assert again.status_code == 409 and again.json()["error"]["code"] == "proposal_decided"
    twice = acme_staff.post(f"/staff/memory/proposals/{retire['proposal_id']}/reject")
    assert twice.status_code == 409 and twice.json()["error"]["code"] == "proposal_decided"
    assert acme_staff.get("/staff/memory/proposals", params={"status": "pending"}).json()["items"] == []


def test_proposals_are_for_the_tenants_staff_only(
    acme: httpx.Client, acme_staff: httpx.Client, globex: httpx.Client, globex_staff: httpx.Client
) -> None:
    faq = _faq(acme_staff)
    proposal_id = _feedback(acme, _served(acme), validated=False, corrected_answer=POISON).json()[
        "proposal_id"
    ]
    base = f"/staff/memory/proposals/{proposal_id}"

    for client in (acme, globex):
        assert client.get("/staff/memory/proposals").status_code == 403
        assert client.get(base).status_code == 403
        assert client.post(f"{base}/accept").status_code == 403
        assert client.post(f"{base}/reject").status_code == 403

    assert globex_staff.get("/staff/memory/proposals").json() == {"items": [], "next_cursor": None}
    for response in (
        globex_staff.get(base),
        globex_staff.post(f"{base}/accept", json={"force": True}),
        globex_staff.post(f"{base}/reject"),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "proposal_not_found"
    assert acme_staff.get(base).json()["status"] == "pending", "another tenant's attempts left it as it was"
    assert acme_staff.get(f"/staff/memory/{faq['id']}").json()["answer"] == ANSWER

    missing = acme_staff.post("/staff/memory/proposals/999999/accept")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "proposal_not_found"
    assert acme_staff.get("/staff/memory/proposals", params={"status": "maybe"}).status_code == 422
    assert acme_staff.get("/staff/memory/proposals/99999999999999999999").status_code == 422
    assert acme_staff.post(f"{base}/accept", json={"force": "perhaps"}).status_code == 422


def test_accepting_over_a_later_change_needs_force(acme: httpx.Client, acme_staff: httpx.Client) -> None:
    faq = _faq(acme_staff)
    proposal_id = _feedback(acme, _served(acme), validated=True, corrected_answer=POISON).json()[
        "proposal_id"
    ]
    rewritten = "Un an à compter de la réception, prolongé des réserves levées."
    acme_staff.patch(f"/staff/memory/{faq['id']}", json={"answer": rewritten}).raise_for_status()

    listed = acme_staff.get(f"/staff/memory/proposals/{proposal_id}").json()
    assert listed["entry_changed"] is True and listed["entry"]["answer"] == rewritten
    refused = acme_staff.post(f"/staff/memory/proposals/{proposal_id}/accept")
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "entry_changed"
    assert error["current"] == {"question": QUESTION, "answer": rewritten, "status": "validated"}
    assert acme_staff.get(f"/staff/memory/{faq['id']}").json()["answer"] == rewritten, "refused: unchanged"
    assert acme_staff.get(f"/staff/memory/proposals/{proposal_id}").json()["status"] == "pending"

    forced = acme_staff.post(f"/staff/memory/proposals/{proposal_id}/accept", json={"force": True})
    assert forced.status_code == 200, forced.text
    assert acme_staff.get(f"/staff/memory/{faq['id']}").json()["answer"] == POISON

    deleted_id = _feedback(acme, _served(acme), validated=False).json()["proposal_id"]
    acme_staff.delete(f"/staff/memory/{faq['id']}").raise_for_status()
    gone = acme_staff.post(f"/staff/memory/proposals/{deleted_id}/accept", json={"force": True})
    assert gone.status_code == 409 and gone.json()["error"]["code"] == "entry_deleted"
    assert acme_staff.get(f"/staff/memory/proposals/{deleted_id}").json()["entry"] is None
    assert acme_staff.post(f"/staff/memory/proposals/{deleted_id}/reject").json()["status"] == "rejected"


def test_on_a_learned_entry_only_a_no_applies_at_once(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=LEARNED))
    learned = chat(acme, message=QUESTION).done
    entry_id = learned["learned_entry_id"]

    corrected = _feedback(acme, learned, validated=True, corrected_answer=POISON).json()
    assert corrected == {
        "entry_id": entry_id,
        "status": "auto",
        "outcome": "proposed",
        "proposal_id": corrected["proposal_id"],
        "variant": None,
    }
    assert _feedback(acme, learned, validated=True, corrected_answer=POISON).json() == corrected, (
        "the same feedback sent twice makes one proposal"
    )
    assert _served(acme)["answer"] == LEARNED, "a client cannot poison what other users are served"

    validate = _feedback(acme, learned, validated=True).json()
    assert (validate["outcome"], validate["status"]) == ("proposed", "auto")
    kinds = [p["kind"] for p in acme_staff.get("/staff/memory/proposals").json()["items"]]
    assert kinds == ["validate", "correct"]

    refused = _feedback(acme, learned, validated=False).json()
    assert refused == {
        "entry_id": entry_id,
        "status": "obsolete",
        "outcome": "applied",
        "proposal_id": None,
        "variant": None,
    }
    event = acme_staff.get(f"/staff/memory/{entry_id}/history").json()["items"][0]
    assert (event["action"], event["actor"], event["proposal_id"]) == ("feedback", CLIENT, None)
    fresh_upstream.push(Reply(text="Un an."))
    assert chat(acme, message=QUESTION).done["decision"] == "miss", "a retired entry is never served"
    assert _feedback(acme, learned, validated=False).json()["outcome"] == "unchanged"

    # Staff may still take the client's word: accepting the validation, forced past the retirement.
    stale = acme_staff.post(f"/staff/memory/proposals/{validate['proposal_id']}/accept")
    assert stale.status_code == 409 and stale.json()["error"]["current"]["status"] == "obsolete"
    accepted = acme_staff.post(
        f"/staff/memory/proposals/{corrected['proposal_id']}/accept", json={"force": True}
    ).json()
    assert accepted["status"] == "accepted"
    entry = acme_staff.get(f"/staff/memory/{entry_id}").json()
    assert (entry["answer"], entry["status"], entry["source"]) == (POISON, "validated", "staff")


def test_pages_of_proposals(acme: httpx.Client, acme_staff: httpx.Client) -> None:
    _faq(acme_staff)
    ids = [
        _feedback(acme, _served(acme), validated=False, corrected_answer=f"{ANSWER} ({n})").json()[
            "proposal_id"
        ]
        for n in range(3)
    ]
    first = acme_staff.get("/staff/memory/proposals", params={"limit": 2}).json()
    assert [p["id"] for p in first["items"]] == ids[:0:-1] and first["next_cursor"]
    rest = acme_staff.get("/staff/memory/proposals", params={"limit": 2, "cursor": first["next_cursor"]})
    assert [p["id"] for p in rest.json()["items"]] == ids[:1] and rest.json()["next_cursor"] is None
    acme_staff.post(f"/staff/memory/proposals/{ids[0]}/reject").raise_for_status()
    by_status = {
        status: [
            p["id"]
            for p in acme_staff.get("/staff/memory/proposals", params={"status": status}).json()["items"]
        ]
        for status in ("pending", "accepted", "rejected")
    }
    assert by_status == {"pending": ids[:0:-1], "accepted": [], "rejected": ids[:1]}
    bad = acme_staff.get("/staff/memory/proposals", params={"cursor": "abc"})
    assert bad.status_code == 422


def test_two_staff_accepting_at_once_apply_it_once(acme: httpx.Client, acme_staff: httpx.Client) -> None:
    faq = _faq(acme_staff)
    proposal_id = _feedback(acme, _served(acme), validated=True, corrected_answer=POISON).json()[
        "proposal_id"
    ]
    url = f"{acme_staff.base_url}/staff/memory/proposals/{proposal_id}/accept"

    def accept(_: int) -> int:
        return httpx.post(url, headers={"Authorization": "Bearer sa"}, timeout=10).status_code

    with ThreadPoolExecutor(max_workers=4) as pool:
        statuses = sorted(pool.map(accept, range(4)))
    assert statuses == [200, 409, 409, 409]
    history = acme_staff.get(f"/staff/memory/{faq['id']}/history").json()["items"]
    assert [e["proposal_id"] for e in history] == [proposal_id, None], "one change, one audit event"
