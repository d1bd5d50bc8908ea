"""The staff console's API: filters, edits, the audit trail, usage, stats over time, safety."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from memory_guard.api.app import create_app
from tests.conftest import client_for, make_settings
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quel est le taux de la retenue de garantie sur un marché de travaux ?"
OTHER = "Comment calculer l'empreinte carbone d'une PME ?"


def _faq(staff: httpx.Client, question: str = QUESTION, answer: str = "5 %", **extra: object) -> dict:
    response = staff.post("/staff/memory", json={"question": question, "answer": answer, **extra})
    assert response.status_code == 201, response.text
    return dict(response.json())


def _ids(staff: httpx.Client, **params: object) -> list[int]:
    response = staff.get("/staff/memory", params=params)
    assert response.status_code == 200, response.text
    return [item["id"] for item in response.json()["items"]]


def _error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    return str(response.json()["error"]["code"])


def test_filters_by_source_tag_and_creation_date(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    faq = _faq(acme_staff, tags=["marchés", "retenue"])
    other = _faq(acme_staff, question=OTHER, answer="Scopes 1, 2 et 3.", tags=["carbone"])
    fresh_upstream.push(Reply(text="Quinze jours ouvrés."))
    learned = chat(acme, message="Quel est le délai de notification d'un ordre de service ?").done
    learned_id = learned["learned_entry_id"]
    assert learned_id is not None

    assert _ids(acme_staff, source="learned") == [learned_id]
    assert _ids(acme_staff, source="faq") == [other["id"], faq["id"]]
    assert _ids(acme_staff, tag="retenue") == [faq["id"]]
    assert _ids(acme_staff, tag="carbone", source="faq") == [other["id"]]
    assert _ids(acme_staff, tag="absent") == []

    today = datetime.now(UTC).date()
    assert len(_ids(acme_staff, created_from=today.isoformat(), created_to=today.isoformat())) == 3
    assert _ids(acme_staff, created_to=(today - timedelta(days=1)).isoformat()) == []
    assert _ids(acme_staff, created_from=(today + timedelta(days=1)).isoformat()) == []
    backwards = {"created_from": today.isoformat(), "created_to": (today - timedelta(days=2)).isoformat()}
    assert _error(acme_staff.get("/staff/memory", params=backwards), 422) == "invalid_date_range"
    assert _error(acme_staff.get("/staff/memory", params={"created_from": "hier"}), 422) == "invalid_request"
    assert _error(acme_staff.get("/staff/memory", params={"source": "llm"}), 422) == "invalid_request"
    # The semantic search takes the same filters.
    found = acme_staff.get("/staff/memory", params={"query": "empreinte carbone", "source": "faq"})
    assert found.json()["items"][0]["id"] == other["id"]


def test_filters_by_scope(acme_staff: httpx.Client) -> None:
    plain = _faq(acme_staff)
    p1 = _faq(acme_staff, project="P1")
    p1_study = _faq(acme_staff, project="P1", phase="études")
    esg = _faq(acme_staff, question=OTHER, agent="esg", project="P1")
    assert _ids(acme_staff, project="P1") == [esg["id"], p1_study["id"], p1["id"]]
    assert _ids(acme_staff, project="P1", phase="études") == [p1_study["id"]]
    assert _ids(acme_staff, agent="esg") == [esg["id"]]
    assert _ids(acme_staff, agent="default", project="P1") == [p1_study["id"], p1["id"]]
    assert plain["id"] in _ids(acme_staff, agent="default")
    assert _ids(acme_staff, project="P2") == []


def test_a_new_question_is_re_embedded_and_served_under_its_new_wording(
    acme: httpx.Client, acme_staff: httpx.Client
) -> None:
    entry = _faq(
        acme_staff, question="Quel est le délai de la garantie de parfait achèvement ?", answer="1 an"
    )
    patched = acme_staff.patch(f"/staff/memory/{entry['id']}", json={"question": OTHER})
    assert patched.status_code == 200, patched.text
    assert patched.json()["question"] == OTHER

    served = chat(acme, message=OTHER).of("cached_response")
    assert served and served[0]["entry_id"] == entry["id"], "the new wording is an exact match"
    old = acme_staff.post(
        "/staff/memory/lookup", json={"question": "Quel est le délai de la garantie de parfait achèvement ?"}
    ).json()
    assert all(not c["exact"] for c in old["candidates"]), "the old wording no longer matches exactly"
    semantic = acme_staff.get("/staff/memory", params={"query": "empreinte carbone PME"}).json()
    assert semantic["items"][0]["id"] == entry["id"], "its vector is the new question's"


def test_edit_errors_are_clear(acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    path = f"/staff/memory/{entry['id']}"
    assert _error(acme_staff.patch(path, json={}), 422) == "empty_edit"
    assert _error(acme_staff.patch(path, json={"question": "   "}), 422) == "empty_question"
    assert _error(acme_staff.patch(path, json={"questoin": "typo"}), 422) == "invalid_request"
    assert _error(acme_staff.patch(path, json={"expires_at": "demain"}), 422) == "invalid_request"
    assert _error(acme_staff.post("/staff/memory/999999/validate"), 404) == "entry_not_found"
    assert _error(acme_staff.get("/staff/memory/999999/history"), 404) == "entry_not_found"
    assert _error(acme_staff.get("/staff/memory/999999/usage"), 404) == "entry_not_found"
    history = acme_staff.get(f"{path}/history").json()["items"]
    assert [event["action"] for event in history] == ["create"], "a refused edit leaves no trace"


def test_every_staff_action_is_in_the_entry_history_with_before_and_after(
    app_factory: Callable[..., LiveApp],
) -> None:
    live = app_factory(api_keys="ka:acme:client,sa:acme:staff:Claire Martin")
    with client_for(live, "sa") as staff:
        entry = _faq(staff, answer="5 %")
        path = f"/staff/memory/{entry['id']}"
        assert staff.post(f"{path}/obsolete").json()["status"] == "obsolete"
        assert staff.post(f"{path}/validate").json()["status"] == "validated"
        staff.patch(path, json={"answer": "5 % du montant TTC", "tags": ["marchés"]}).raise_for_status()
        history = staff.get(f"{path}/history").json()["items"]

    assert [event["action"] for event in history] == ["edit", "validate", "obsolete", "create"]
    assert {event["actor"] for event in history} == {"Claire Martin"}
    edit, validate, obsolete, create = history
    assert create["before"] is None and create["after"]["answer"] == "5 %"
    assert (obsolete["before"]["status"], obsolete["after"]["status"]) == ("validated", "obsolete")
    assert (validate["before"]["status"], validate["after"]["status"]) == ("obsolete", "validated")
    assert (edit["before"]["answer"], edit["after"]["answer"]) == ("5 %", "5 % du montant TTC")
    assert (edit["before"]["tags"], edit["after"]["tags"]) == ([], ["marchés"])
    assert all(event["entry_id"] == entry["id"] for event in history)


def test_a_deleted_entry_keeps_its_history_and_the_log_filters_by_action(acme_staff: httpx.Client) -> None:
    kept = _faq(acme_staff, question=OTHER)
    gone = _faq(acme_staff, answer="Cinq pour cent.")
    assert acme_staff.delete(f"/staff/memory/{gone['id']}").status_code == 204

    history = acme_staff.get(f"/staff/memory/{gone['id']}/history").json()["items"]
    assert [event["action"] for event in history] == ["delete", "create"]
    assert history[0]["before"]["answer"] == "Cinq pour cent." and history[0]["after"] is None
    digest = hashlib.sha256(b"sa").hexdigest()[:8]
    assert history[0]["actor"] == f"staff key {digest}", "named by a digest of the key, never by the key"

    deletes = acme_staff.get("/staff/memory/audit", params={"action": "delete"}).json()["items"]
    assert [event["entry_id"] for event in deletes] == [gone["id"]]
    both = acme_staff.get("/staff/memory/audit", params=[("action", "delete"), ("action", "create")])
    assert len(both.json()["items"]) == 3
    of_kept = acme_staff.get("/staff/memory/audit", params={"entry_id": kept["id"]}).json()["items"]
    assert [event["action"] for event in of_kept] == ["create"]
    assert _error(acme_staff.get("/staff/memory/audit", params={"action": "hack"}), 422) == "invalid_request"


def test_any_recorded_change_can_be_undone_even_a_delete(
    acme: httpx.Client, acme_staff: httpx.Client
) -> None:
    entry = _faq(acme_staff, answer="5 %", tags=["marchés"])
    path = f"/staff/memory/{entry['id']}"
    acme_staff.patch(path, json={"question": OTHER, "answer": "faux", "tags": []}).raise_for_status()
    edit = acme_staff.get(f"{path}/history").json()["items"][0]
    restored = acme_staff.post(f"/staff/memory/audit/{edit['id']}/restore")
    assert restored.status_code == 200, restored.text
    assert (restored.json()["question"], restored.json()["answer"]) == (QUESTION, "5 %")
    assert restored.json()["tags"] == ["marchés"]
    assert chat(acme, message=QUESTION).of("cached_response")[0]["answer"] == "5 %", "re-embedded too"

    assert acme_staff.delete(path).status_code == 204
    deletion = acme_staff.get(f"{path}/history").json()["items"][0]
    assert deletion["action"] == "delete"
    back = acme_staff.post(f"/staff/memory/audit/{deletion['id']}/restore").json()
    assert back["id"] == entry["id"] and back["answer"] == "5 %"
    assert acme_staff.get(path).status_code == 200
    assert acme_staff.get(f"{path}/history").json()["items"][0]["action"] == "restore"

    create = acme_staff.get(f"{path}/history").json()["items"][-1]
    undo_create = acme_staff.post(f"/staff/memory/audit/{create['id']}/restore")
    assert _error(undo_create, 422) == "nothing_to_restore"
    missing = acme_staff.post("/staff/memory/audit/999999/restore")
    assert _error(missing, 404) == "audit_event_not_found"


def test_audit_log_pages_newest_first(acme_staff: httpx.Client) -> None:
    for n in range(5):
        _faq(acme_staff, question=f"{QUESTION} (lot {n})")
    seen: list[int] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = acme_staff.get("/staff/memory/audit", params=params).json()
        seen += [event["id"] for event in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 5 and seen == sorted(seen, reverse=True)


def test_learning_and_client_feedback_are_in_the_history_too(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="Quinze jours ouvrés."))
    reply = chat(acme, message="Quel est le délai de notification d'un ordre de service ?")
    entry_id = reply.done["learned_entry_id"]
    feedback = acme.post(
        f"/chat/{reply.done['conversation_id']}/messages/{reply.done['message_id']}/feedback",
        json={"validated": False},
    )
    assert feedback.status_code == 200, feedback.text
    history = acme_staff.get(f"/staff/memory/{entry_id}/history").json()["items"]
    assert [(e["action"], e["actor"]) for e in history] == [
        ("feedback", f"client key {hashlib.sha256(b'ka').hexdigest()[:8]}"),
        ("create", "memory-guard (learning)"),
    ]
    assert history[0]["after"]["status"] == "obsolete"


def test_expiry_can_be_set_cleared_and_pruning_is_audited(acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    path = f"/staff/memory/{entry['id']}"
    soon = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0)
    set_ = acme_staff.patch(path, json={"expires_at": soon.isoformat()}).json()
    assert set_["expires_at"].startswith(soon.strftime("%Y-%m-%dT%H:%M:%S"))
    cleared = acme_staff.patch(path, json={"expires_at": None}).json()
    assert cleared["expires_at"] > set_["expires_at"], "back to the age limit"

    past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    acme_staff.patch(path, json={"expires_at": past}).raise_for_status()
    assert acme_staff.post("/staff/memory/prune").json() == {"removed": 1}
    pruned = acme_staff.get(f"{path}/history").json()["items"][0]
    assert pruned["action"] == "prune" and pruned["before"]["question"] == QUESTION


def test_usage_lists_the_lookups_an_entry_answered(acme: httpx.Client, acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    chat(acme, message=QUESTION)
    chat(acme, message=QUESTION.upper())
    usage = acme_staff.get(f"/staff/memory/{entry['id']}/usage").json()
    assert usage["entry_id"] == entry["id"]
    assert usage["usage_count"] == 4, "direct answers count twice"
    assert usage["lookups"] == {"direct": 2, "assisted": 0}
    assert [r["question"] for r in usage["recent"]] == [QUESTION.upper(), QUESTION]
    assert usage["last_used_at"] is not None


def test_stats_give_a_timeline_and_the_cost_avoided(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(memory_price_per_1k_tokens=0.5, memory_price_currency="EUR")
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        fresh_upstream.push(Reply(text="Quinze jours ouvrés.", usage=(800, 200)))
        question = "Quel est le délai de notification d'un ordre de service ?"
        chat(acme, message=question)
        chat(acme, message=question)
        report = staff.get("/staff/memory/stats", params={"days": 7}).json()
        assert _error(staff.get("/staff/memory/stats", params={"days": 0}), 422) == "invalid_request"

    assert report["tokens_saved"] == 1000
    assert report["cost_avoided"] == {"amount": 0.5, "currency": "EUR", "price_per_1k_tokens": 0.5}
    timeline = report["timeline"]
    assert len(timeline) == 7
    assert timeline[-1] == {
        "day": datetime.now(UTC).date().isoformat(),
        "direct": 1,
        "assisted": 0,
        "miss": 1,
    }
    assert all(point["direct"] + point["miss"] == 0 for point in timeline[:-1])
    assert report["entries_by_source"]["learned"] == 1


def test_client_keys_get_403_on_every_staff_route(tmp_path: Path, fresh_upstream: FakeUpstream) -> None:
    live = LiveApp(make_settings(tmp_path, fresh_upstream)).start()
    try:
        paths = create_app(live.settings).openapi()["paths"]
        routes = [
            (
                method.upper(),
                path.replace("{entry_id}", "1").replace("{lookup_id}", "1").replace("{event_id}", "1"),
            )
            for path, operations in paths.items()
            if path.startswith("/staff/memory") and not path.startswith("/staff/memory/ui")
            for method in operations
        ]
        assert len(routes) >= 18, routes
        with client_for(live, "ka") as acme:
            for method, path in routes:
                response = acme.request(method, path, json={})
                assert _error(response, 403) == "staff_only", (method, path)
    finally:
        live.stop()


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("GET", ""),
        ("PATCH", ""),
        ("DELETE", ""),
        ("POST", "/validate"),
        ("POST", "/obsolete"),
        ("GET", "/history"),
        ("GET", "/usage"),
    ],
)
def test_another_tenants_staff_sees_nothing(live: LiveApp, method: str, suffix: str) -> None:
    with client_for(live, "sa") as acme_staff, client_for(live, "sb") as globex_staff:
        entry = _faq(acme_staff)
        body = {"answer": "volé"} if method == "PATCH" else None
        response = globex_staff.request(method, f"/staff/memory/{entry['id']}{suffix}", json=body)
        assert _error(response, 404) == "entry_not_found"
        assert globex_staff.get("/staff/memory/audit").json()["items"] == []
        assert globex_staff.get("/staff/memory/audit", params={"entry_id": entry["id"]}).json()["items"] == []
        assert globex_staff.get("/staff/memory").json()["items"] == []
        event = acme_staff.get(f"/staff/memory/{entry['id']}/history").json()["items"][0]
        stolen = globex_staff.post(f"/staff/memory/audit/{event['id']}/restore")
        assert _error(stolen, 404) == "audit_event_not_found"
        assert acme_staff.get(f"/staff/memory/{entry['id']}").json()["answer"] == "5 %"
