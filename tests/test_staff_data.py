"""Staff data as a new user finds it (issue 11, finding 10): no silent duplicate FAQ, a restore that
keeps usage, no modification logged when nothing changed, a question timed before its answer, usage
that lists only real usage, a ranked semantic search, codes beside the English for the French page,
and the served answers to review with their text."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from memory_guard.core.actor import describe_actor
from memory_guard.core.verdict import EXACT, Verdict
from memory_guard.core.verdict_reasons import describe_reason
from memory_guard.verify.features import compare
from memory_guard.verify.intent import IntentCheck
from memory_guard.verify.judge import Judgement
from memory_guard.verify.llm_judge import verification_of
from memory_guard.verify.order import OrderCheck
from memory_guard.verify.polarity import PolarityCheck
from memory_guard.verify.verifier import OfflineVerifier
from tests.conftest import client_for
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quel est le taux de la retenue de garantie sur un marché de travaux ?"
ANSWER = "5 % du montant du marché."
CARBON = "Comment calculer l'empreinte carbone d'une PME ?"
T = TypeVar("T")


def _faq(staff: httpx.Client, question: str = QUESTION, answer: str = ANSWER, **extra: Any) -> dict[str, Any]:
    response = staff.post("/staff/memory", json={"question": question, "answer": answer, **extra})
    assert response.status_code == 201, response.text
    return dict(response.json())


def _eventually(read: Callable[[], T], done: Callable[[T], bool]) -> T:
    """`read()` once `done` holds: bookkeeping (usage, history) may be written just after the answer."""
    deadline = time.monotonic() + 10
    value = read()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value


def _history(staff: httpx.Client, entry_id: int) -> list[dict[str, Any]]:
    response = staff.get(f"/staff/memory/{entry_id}/history")
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


# 1. A FAQ for a question already held is refused, naming the entry that holds it.


def test_a_faq_for_a_question_already_held_is_refused_with_the_entry_that_holds_it(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    first = _faq(acme_staff)
    again = acme_staff.post("/staff/memory", json={"question": f"  {QUESTION.upper()}", "answer": "10 %"})
    assert again.status_code == 409, again.text
    assert again.json()["error"]["code"] == "duplicate_question"
    assert again.json()["error"]["entry_id"] == first["id"]
    assert str(first["id"]) in again.json()["error"]["message"]
    assert [e["id"] for e in acme_staff.get("/staff/memory").json()["items"]] == [first["id"]]
    assert chat(acme, message=QUESTION).of("cached_response")[0]["answer"] == ANSWER, "the first still serves"

    # Another scope is another question; an obsolete entry no longer holds its question.
    assert _faq(acme_staff, project="P1")["project"] == "P1"
    acme_staff.post(f"/staff/memory/{first['id']}/obsolete").raise_for_status()
    rewritten = _faq(acme_staff, answer="10 %")
    assert chat(acme, message=QUESTION).of("cached_response")[0]["entry_id"] == rewritten["id"]

    # Nor may an edit or a restore give a live entry a question that another one holds.
    carbon = _faq(acme_staff, CARBON, "Scopes 1, 2 et 3.")
    moved = acme_staff.patch(f"/staff/memory/{carbon['id']}", json={"question": QUESTION})
    assert (moved.status_code, moved.json()["error"]["entry_id"]) == (409, rewritten["id"])
    assert acme_staff.delete(f"/staff/memory/{carbon['id']}").status_code == 204
    successor = _faq(acme_staff, CARBON, "Scopes 1 à 3.")
    deletion = _history(acme_staff, carbon["id"])[0]
    back = acme_staff.post(f"/staff/memory/audit/{deletion['id']}/restore")
    assert (back.status_code, back.json()["error"]["entry_id"]) == (409, successor["id"])

    # A learned (auto) answer holds its question too: staff edit or validate it instead.
    fresh_upstream.push(Reply(text="Quinze jours ouvrés."))
    learned = chat(acme, message="Quel est le délai de notification d'un ordre de service ?").done
    refused = acme_staff.post(
        "/staff/memory",
        json={"question": "Quel est le délai de notification d'un ordre de service ?", "answer": "15 jours"},
    )
    assert refused.status_code == 409
    assert refused.json()["error"]["entry_id"] == learned["learned_entry_id"]


# 2. Restoring a deleted entry keeps how much it was used.


def test_restoring_a_deleted_entry_keeps_its_usage(acme: httpx.Client, acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    path = f"/staff/memory/{entry['id']}"
    chat(acme, message=QUESTION)
    chat(acme, message=QUESTION)
    used = _eventually(lambda: acme_staff.get(path).json(), lambda e: e["usage_count"] == 4)
    assert used["usage_count"] == 4 and used["last_used_at"] is not None

    assert acme_staff.delete(path).status_code == 204
    deletion = _history(acme_staff, entry["id"])[0]
    back = acme_staff.post(f"/staff/memory/audit/{deletion['id']}/restore")
    assert back.status_code == 200, back.text
    assert back.json()["usage_count"] == 4, "usage is not content: a restore keeps it"
    assert back.json()["last_used_at"] == used["last_used_at"]
    assert acme_staff.get(f"{path}/usage").json()["usage_count"] == 4


# 3. A refresh that gives the same answer is no modification.


def test_a_refresh_giving_the_same_answer_is_not_logged_as_a_modification(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    question = "Quel est le délai de paiement d'une situation de travaux ?"
    fresh_upstream.push(
        Reply(text="Trente jours."), Reply(text="Trente jours."), Reply(text="Soixante jours.")
    )
    entry_id = chat(acme, message=question).done["learned_entry_id"]
    assert chat(acme, message=question, cache="refresh").done["learned_entry_id"] == entry_id
    assert [e["action"] for e in _history(acme_staff, entry_id)] == ["refresh", "create"]
    refresh = _history(acme_staff, entry_id)[0]
    assert refresh["before"]["answer"] == refresh["after"]["answer"] == "Trente jours."

    assert chat(acme, message=question, cache="refresh").done["learned_entry_id"] == entry_id
    assert [e["action"] for e in _history(acme_staff, entry_id)] == ["edit", "refresh", "create"]

    # The same rule holds for staff: a patch that changes nothing visible only renews the entry.
    acme_staff.patch(f"/staff/memory/{entry_id}", json={"answer": "Soixante jours."}).raise_for_status()
    assert _history(acme_staff, entry_id)[0]["action"] == "refresh"
    refreshes = acme_staff.get("/staff/memory/audit", params={"action": "refresh"}).json()["items"]
    assert len(refreshes) == 2


# 4. A question is timed when it came, its answer when it was complete.


def test_an_answer_is_timed_after_its_question(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="Dix ans à compter de la réception.", chunk_delay_s=0.01))
    learned = chat(acme, message="Quelle est la durée de la garantie décennale ?").done
    _faq(acme_staff)
    served = chat(acme, message=QUESTION).done
    for done in (learned, served):
        items = _eventually(
            lambda done=done: acme.get(f"/chat/{done['conversation_id']}/messages").json()["items"],
            lambda items: len(items) == 2,
        )
        question, answer = items
        assert (question["role"], answer["role"]) == ("user", "assistant")
        assert question["created_at"] < answer["created_at"], (question, answer)


# 5. The usage of an entry lists the lookups it answered, and no miss.


def test_usage_lists_what_the_entry_answered_and_no_miss(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    entry = _faq(acme_staff)
    fresh_upstream.push(Reply(text="Trois mois."), Reply(text="Une grounding."))
    miss = chat(acme, message="Quel est le délai de préavis d'un bail commercial ?")
    assert miss.done["decision"] == "miss"
    served = chat(acme, message=QUESTION)
    assert served.done["decision"] == "direct"
    # A follow-up that leans on its conversation is never answered direct: the entry is its grounding.
    follow_up = f"Et {QUESTION[0].lower()}{QUESTION[1:]}"
    grounded = chat(acme, f"/chat/{served.done['conversation_id']}/message", message=follow_up)
    assert grounded.done["decision"] == "assisted"
    # The miss names the entry as its best (distant) candidate in the lookup log.
    misses = acme_staff.get("/staff/memory/stats").json()["lookups"]["miss"]
    assert misses == 1

    usage = _eventually(
        lambda: acme_staff.get(f"/staff/memory/{entry['id']}/usage").json(), lambda u: len(u["recent"]) >= 2
    )
    assert [r["question"] for r in usage["recent"]] == [follow_up, QUESTION], "no unrelated miss"
    assert usage["lookups"] == {"direct": 1, "assisted": 1}
    assert [(r["decision"], r["role"]) for r in usage["recent"]] == [
        ("assisted", "grounding"),
        ("direct", "served"),
    ]


# 6. A semantic search ranks by score above a floor, and pages by cursor.


def test_semantic_search_is_ranked_scored_floored_and_paged(acme_staff: httpx.Client) -> None:
    carbon = _faq(acme_staff, CARBON, "Scopes 1, 2 et 3.")
    plant = _faq(acme_staff, "Comment réduire l'empreinte carbone d'une usine ?", "Efficacité énergétique.")
    bilan = _faq(acme_staff, "Qu'est-ce qu'un bilan carbone ?", "Un inventaire des émissions.")
    unrelated = _faq(acme_staff)

    found = acme_staff.get("/staff/memory", params={"query": "empreinte carbone"}).json()
    items = found["items"]
    scores = [item["score"] for item in items]
    assert scores == sorted(scores, reverse=True), "best first"
    assert all(score >= 0.4 for score in scores), "nothing under the floor"
    assert items[0]["id"] == carbon["id"]
    ids = [item["id"] for item in items]
    assert unrelated["id"] not in ids, "an unrelated entry is not listed"
    assert {carbon["id"], plant["id"]} <= set(ids)

    # Page by page, the same order; an entry added meanwhile ahead of the cursor neither repeats an
    # item nor skips one (an offset would have shifted them).
    seen: list[int] = []
    cursor = None
    while True:
        params: dict[str, Any] = {
            "query": "empreinte carbone",
            "limit": 1,
            **({"cursor": cursor} if cursor else {}),
        }
        page = acme_staff.get("/staff/memory", params=params).json()
        seen += [item["id"] for item in page["items"]]
        if not seen[1:]:
            _faq(acme_staff, "Empreinte carbone ?", "Ranked first now, so before this page's cursor.")
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids
    assert bilan["id"] not in ids or ids.index(bilan["id"]) > ids.index(carbon["id"])

    bad = acme_staff.get("/staff/memory", params={"query": "carbone", "cursor": "12"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_cursor"
    plain = acme_staff.get("/staff/memory").json()["items"]
    assert all("score" not in item for item in plain), "a plain list has no score"


def test_the_search_floor_is_a_setting(app_factory: Callable[..., LiveApp]) -> None:
    live = app_factory(memory_search_min_score=-1.0)
    with client_for(live, "sa") as staff:
        _faq(staff, CARBON, "Scopes.")
        _faq(staff)
        found = staff.get("/staff/memory", params={"query": "empreinte carbone"}).json()["items"]
    assert len(found) == 2, "a floor of -1 lists everything, still ranked"
    assert found[0]["question"] == CARBON


# 7. What the server writes in English comes with a stable code for the French page.


def test_reasons_actors_and_import_errors_come_with_codes(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    _faq(acme_staff)
    near = QUESTION.replace("marché de travaux", "marché de 30 000 € de travaux")
    candidate = acme_staff.post("/staff/memory/lookup", json={"question": near}).json()["candidates"][0]
    assert candidate["reason_code"] == "numbers_differ"
    assert candidate["reason_params"] == {"stored": "", "incoming": "30 000"}
    exact = acme_staff.post("/staff/memory/lookup", json={"question": QUESTION}).json()["candidates"][0]
    assert (exact["reason_code"], exact["reason_params"]) == ("exact", {})

    fresh_upstream.push(Reply(text="Quinze jours ouvrés."))
    learned = chat(acme, message="Quel est le délai de notification d'un ordre de service ?").done
    events = acme_staff.get("/staff/memory/audit").json()["items"]
    by_entry = {event["entry_id"]: event for event in events}
    assert by_entry[learned["learned_entry_id"]]["actor_code"] == "learning"
    staff_event = next(e for e in events if e["entry_id"] != learned["learned_entry_id"])
    assert staff_event["actor_code"] == "key"
    assert staff_event["actor_params"]["role"] == "staff"
    assert staff_event["actor"] == f"staff key {staff_event['actor_params']['digest']}"

    lines = [
        "{not json",
        "[1, 2]",
        json.dumps({"question": "Q ?", "answer": "R", "status": "inconnu"}),
        json.dumps({"question": "  ", "answer": "R"}),
        json.dumps({"question": "Une question ?", "answer": "R"}),
        json.dumps({"question": "Une question ?", "answer": "R bis"}),
    ]
    response = acme_staff.post("/staff/memory/import", content="\n".join(lines).encode())
    assert response.status_code == 422, response.text
    codes = [(line["line"], line["code"], line["params"]) for line in response.json()["error"]["lines"]]
    assert codes == [
        (1, "invalid_json", {"column": 2}),
        (2, "not_an_object", {}),
        (3, "invalid_fields", {"fields": "status"}),
        (4, "blank_text", {}),
        (6, "repeated_question", {"first_line": 5}),
    ]


def test_every_reason_the_verifier_writes_has_a_code() -> None:
    checks_only = OfflineVerifier(None)
    reasons = [
        EXACT.reason,
        checks_only.verify("Quel est le délai ?", "Quel est le délai ?", 0.99).reason,
        compare("Quel est le plafond pour 30 000 € ?", "Quel est le plafond pour 150 000 € ?", 0.9).conflict,
        compare("Faut-il un permis ?", "Ne faut-il pas de permis ?", 0.9).conflict,
        PolarityCheck(False, "augmenter vs diminue").reason,
        compare(
            "Quelle est la durée de la garantie décennale ?",
            "Quelle est la durée de la garantie biennale ?",
            0.9,
        ).conflict,
        IntentCheck("define", "cost").reason,
        OrderCheck(("rond-point", "feux")).reason,
        verification_of(Judgement(True, "same thing asked")).reason,
        "verifier off",
    ]
    codes = [describe_reason(reason)["reason_code"] for reason in reasons]
    assert codes == [
        "exact",
        "checks_only",
        "numbers_differ",
        "negation",
        "opposite_meaning",
        "key_term",
        "kind_of_answer",
        "word_order",
        "judge",
        "verifier_off",
    ], list(zip(reasons, codes, strict=True))
    for verdict, words in ((Verdict.ACCEPT, "same question"), (Verdict.REJECT, "likely another question")):
        assert describe_reason(f"{words} (p=0.93)") == {
            "reason_code": "classifier_same" if verdict is Verdict.ACCEPT else "classifier_other",
            "reason_params": {"p": "0.93"},
        }
    assert describe_reason("unsure (p=0.50)")["reason_code"] == "classifier_unsure"
    assert describe_reason("something new")["reason_code"] == "other"
    assert describe_actor("Claire Martin") == {"actor_code": None, "actor_params": {}}
    assert describe_actor("memory-guard (auto-prune)")["actor_code"] == "auto_prune"


# 8. The served answers to review carry the answer served and the entry's question.


def test_served_hits_carry_the_answer_and_the_entry_question(
    acme: httpx.Client, acme_staff: httpx.Client
) -> None:
    entry = _faq(acme_staff)
    chat(acme, message=QUESTION.upper())
    hits = _eventually(
        lambda: acme_staff.get("/staff/memory/hits", params={"review": "none"}).json()["items"],
        lambda items: len(items) == 1,
    )
    (hit,) = hits
    assert hit["question"] == QUESTION.upper()
    assert (hit["entry_id"], hit["entry_question"], hit["answer"]) == (entry["id"], QUESTION, ANSWER)
    assert hit["entry_changed"] is False
    assert (hit["reason_code"], hit["reviewed_by_code"]) == ("exact", None)

    acme_staff.patch(f"/staff/memory/{entry['id']}", json={"answer": "Cinq pour cent."}).raise_for_status()
    review = acme_staff.post(f"/staff/memory/hits/{hit['lookup_id']}/review", json={"correct": False})
    assert review.status_code == 200, review.text
    (after,) = acme_staff.get("/staff/memory/hits", params={"review": "wrong"}).json()["items"]
    assert after["answer"] == "Cinq pour cent." and after["entry_changed"] is True
    assert after["reviewed_by_code"] == "key"
    assert acme_staff.get("/staff/memory/hits", params={"review": "none"}).json()["items"] == []
