"""Question variants through the staff API of the real service: added, matched, served, removed,
kept apart by tenant, moved by export and import, refused when wrong."""

from __future__ import annotations

import httpx

from tests.conftest import client_for
from tests.server import LiveApp, chat

# A number the variant does not have: the verifier reading the entry's question would refuse the match.
QUESTION = "Quels moyens de paiement acceptez-vous pour les factures de 2024 ?"
ANSWER = "Carte bancaire, virement ou chèque."
VARIANT = "Puis-je régler une facture par virement bancaire ?"
# The variant with a greeting: another exact-match key, the same vector (greetings are not embedded).
NEAR_VARIANT = "Bonjour, puis-je régler une facture par virement bancaire ?"


def _faq(staff: httpx.Client, question: str = QUESTION, answer: str = ANSWER) -> dict:
    response = staff.post("/staff/memory", json={"question": question, "answer": answer})
    assert response.status_code == 201, response.text
    return dict(response.json())


def _add(staff: httpx.Client, entry_id: int, question: str = VARIANT) -> dict:
    response = staff.post(f"/staff/memory/{entry_id}/variants", json={"question": question})
    assert response.status_code == 201, response.text
    return dict(response.json())


def _lookup(staff: httpx.Client, question: str) -> dict:
    response = staff.post("/staff/memory/lookup", json={"question": question})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_variant_added_by_staff_is_served_from_its_entry_on_an_exact_match(
    acme: httpx.Client, acme_staff: httpx.Client
) -> None:
    entry = _faq(acme_staff)
    assert _lookup(acme_staff, VARIANT)["decision"] == "miss", "the entry's question alone is far"
    variant = _add(acme_staff, entry["id"])
    assert {k: variant[k] for k in ("entry_id", "question", "status", "origin", "confirmations")} == {
        "entry_id": entry["id"],
        "question": VARIANT,
        "status": "validated",
        "origin": "staff",
        "confirmations": 1,
    }
    found = _lookup(acme_staff, VARIANT.upper())  # the same key: case does not count
    assert found["decision"] == "direct" and found["served_entry_id"] == entry["id"]
    best = found["candidates"][0]
    assert best["exact"] and best["matched_question"] == VARIANT
    assert best["variant"] == {"id": variant["id"], "status": "validated", "confirmations": 1, "held": False}
    reply = chat(acme, message=VARIANT)
    served = reply.of("cached_response")
    assert served and served[0]["entry_id"] == entry["id"] and served[0]["answer"] == ANSWER
    assert served[0]["matched_question"] == VARIANT, "the answer says which wording matched"
    shown = acme_staff.get(f"/staff/memory/{entry['id']}").json()
    assert [v["question"] for v in shown["variants"]] == [VARIANT]
    assert acme_staff.get(f"/staff/memory/{entry['id']}/variants").json()["items"] == [variant]


def test_a_variant_is_matched_by_vector_and_verified_against_its_own_wording(
    acme_staff: httpx.Client, live: LiveApp
) -> None:
    entry = _faq(acme_staff)
    assert _lookup(acme_staff, NEAR_VARIANT)["decision"] == "miss"
    variant = _add(acme_staff, entry["id"])
    found = _lookup(acme_staff, NEAR_VARIANT)
    best = found["candidates"][0]
    assert not best["exact"] and best["score"] > 0.99
    assert best["matched_question"] == VARIANT and best["variant"]["id"] == variant["id"]
    assert found["decision"] == "direct" and found["served_entry_id"] == entry["id"]
    assert best["verdict"] == "accept", "the verifier read the variant's wording, not the entry's"
    live.restart()  # the index is loaded from the database at start: variants included
    with client_for(live, "sa") as staff:
        again = _lookup(staff, NEAR_VARIANT)
    assert (
        again["served_entry_id"] == entry["id"] and again["candidates"][0]["variant"]["id"] == variant["id"]
    )


def test_a_variant_of_an_obsolete_entry_is_never_served(acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    _add(acme_staff, entry["id"])
    acme_staff.post(f"/staff/memory/{entry['id']}/obsolete").raise_for_status()
    for question in (VARIANT, NEAR_VARIANT):
        found = _lookup(acme_staff, question)
        assert found["decision"] == "miss" and found["candidates"] == [], question
    acme_staff.post(f"/staff/memory/{entry['id']}/validate").raise_for_status()
    for question in (VARIANT, NEAR_VARIANT):  # brought back, it is served through its variant again
        assert _lookup(acme_staff, question)["served_entry_id"] == entry["id"], question


def test_a_variant_whose_entry_is_in_another_tenant_is_never_matched(
    acme_staff: httpx.Client, globex_staff: httpx.Client, globex: httpx.Client
) -> None:
    entry = _faq(acme_staff)
    variant = _add(acme_staff, entry["id"])
    for question in (VARIANT, NEAR_VARIANT):
        found = _lookup(globex_staff, question)
        assert found["decision"] == "miss" and found["candidates"] == [], question
    assert chat(globex, message=VARIANT).of("cached_response") == []
    base = f"/staff/memory/{entry['id']}/variants"
    for response in (
        globex_staff.get(base),
        globex_staff.post(base, json={"question": "Et par chèque ?"}),
        globex_staff.delete(f"{base}/{variant['id']}"),
        globex_staff.post(f"{base}/{variant['id']}/validate"),
    ):
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "entry_not_found"
    assert _lookup(acme_staff, VARIANT)["served_entry_id"] == entry["id"], "nothing was removed"


def test_a_removed_variant_no_longer_matches_and_a_deleted_entry_takes_its_variants(
    acme_staff: httpx.Client,
) -> None:
    entry = _faq(acme_staff)
    variant = _add(acme_staff, entry["id"])
    assert acme_staff.delete(f"/staff/memory/{entry['id']}/variants/{variant['id']}").status_code == 204
    for question in (VARIANT, NEAR_VARIANT):
        assert _lookup(acme_staff, question)["decision"] == "miss", question
    assert acme_staff.get(f"/staff/memory/{entry['id']}/variants").json()["items"] == []
    assert "variants" not in acme_staff.get(f"/staff/memory/{entry['id']}").json()
    again = acme_staff.delete(f"/staff/memory/{entry['id']}/variants/{variant['id']}")
    assert again.status_code == 404 and again.json()["error"]["code"] == "variant_not_found"
    _add(acme_staff, entry["id"])
    assert acme_staff.delete(f"/staff/memory/{entry['id']}").status_code == 204
    for question in (VARIANT, NEAR_VARIANT):
        assert _lookup(acme_staff, question)["candidates"] == [], question
    # Its wording is free again: another entry may hold it.
    other = _faq(acme_staff, question="Comment payer ?", answer="En ligne.")
    _add(acme_staff, other["id"])


def test_variant_changes_are_audited_and_not_restorable_as_entry_states(acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    variant = _add(acme_staff, entry["id"])
    acme_staff.delete(f"/staff/memory/{entry['id']}/variants/{variant['id']}").raise_for_status()
    history = acme_staff.get(f"/staff/memory/{entry['id']}/history").json()["items"]
    assert [e["action"] for e in history] == ["remove_variant", "add_variant", "create"]
    assert history[1]["after"]["question"] == VARIANT and history[1]["before"] is None
    assert history[0]["before"]["variant_id"] == variant["id"] and history[0]["after"] is None
    refused = acme_staff.post(f"/staff/memory/audit/{history[0]['id']}/restore")
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "variant_event"


def test_editing_the_question_leaves_the_variants(acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    variant = _add(acme_staff, entry["id"])
    edited = acme_staff.patch(
        f"/staff/memory/{entry['id']}", json={"question": "Comment payer une facture ?"}
    )
    assert edited.status_code == 200, edited.text
    assert acme_staff.get(f"/staff/memory/{entry['id']}/variants").json()["items"] == [variant]
    assert _lookup(acme_staff, NEAR_VARIANT)["served_entry_id"] == entry["id"]


def test_export_then_import_keeps_the_variants(acme_staff: httpx.Client, globex_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    _add(acme_staff, entry["id"])
    _faq(acme_staff, question="Quel est le délai de livraison ?", answer="48 h.")
    exported = acme_staff.get("/staff/memory/export").text
    lines = [line for line in exported.splitlines() if VARIANT in line]
    assert len(lines) == 1 and '"variants": [{"question": "' + VARIANT in lines[0]
    assert "variants" not in next(line for line in exported.splitlines() if "livraison" in line)
    headers = {"Content-Type": "application/x-ndjson"}
    report = globex_staff.post("/staff/memory/import", content=exported.encode(), headers=headers)
    assert report.status_code == 200 and report.json()["imported"] == 2, report.text
    for question in (VARIANT, NEAR_VARIANT):
        found = _lookup(globex_staff, question)
        assert found["decision"] == "direct" and found["candidates"][0]["variant"] is not None, question
    imported = found["served_entry_id"]
    variants = globex_staff.get(f"/staff/memory/{imported}/variants").json()["items"]
    assert [(v["question"], v["status"], v["origin"]) for v in variants] == [(VARIANT, "validated", "staff")]
    again = globex_staff.post("/staff/memory/import", content=exported.encode(), headers=headers)
    assert again.json()["already_present"] == 2
    assert len(globex_staff.get(f"/staff/memory/{imported}/variants").json()["items"]) == 1


def test_an_import_line_without_variants_and_one_with_a_bad_variant(acme_staff: httpx.Client) -> None:
    headers = {"Content-Type": "application/x-ndjson"}
    old = b'{"question": "Quel est le taux de TVA ?", "answer": "20 %."}\n'
    assert acme_staff.post("/staff/memory/import", content=old, headers=headers).json()["imported"] == 1
    bad = b'{"question": "Q ?", "answer": "A.", "variants": [{"question": "  "}]}\n'
    refused = acme_staff.post("/staff/memory/import", content=bad, headers=headers)
    assert refused.status_code == 422 and refused.json()["error"]["lines"][0]["code"] == "blank_variant"
    misspelt = b'{"question": "Q ?", "answer": "A.", "variants": [{"questoin": "Q2 ?"}]}\n'
    refused = acme_staff.post("/staff/memory/import", content=misspelt, headers=headers)
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_import"


def test_bad_variants_are_refused_with_a_json_error(acme_staff: httpx.Client) -> None:
    entry = _faq(acme_staff)
    other = _faq(acme_staff, question="Quel est le délai de livraison ?", answer="48 h.")
    base = f"/staff/memory/{entry['id']}/variants"
    variant = _add(acme_staff, entry["id"])
    cases = [
        ({"question": ""}, 422, "invalid_request"),
        ({"question": "   "}, 422, "invalid_request"),
        ({"question": "x" * 16_001}, 422, "invalid_request"),
        ({}, 422, "invalid_request"),
        ({"question": "Q ?", "status": "validated"}, 422, "invalid_request"),
        ({"question": QUESTION.upper().replace(" ?", "")}, 422, "variant_is_question"),
        ({"question": VARIANT.lower()}, 409, "duplicate_variant"),
        ({"question": other["question"]}, 409, "duplicate_variant"),
    ]
    for body, status, code in cases:
        response = acme_staff.post(base, json=body)
        assert response.status_code == status, (body, response.text)
        assert response.json()["error"]["code"] == code, (body, response.text)
    duplicate = acme_staff.post(base, json={"question": VARIANT})
    assert duplicate.json()["error"]["variant_id"] == variant["id"]
    # Another entry may not take the wording either, nor may a new entry be written with it.
    taken = acme_staff.post(f"/staff/memory/{other['id']}/variants", json={"question": VARIANT})
    assert taken.status_code == 409 and taken.json()["error"]["entry_id"] == entry["id"]
    written = acme_staff.post("/staff/memory", json={"question": VARIANT, "answer": "Non."})
    assert written.status_code == 409 and written.json()["error"]["code"] == "duplicate_question"
    unknown = acme_staff.post("/staff/memory/999999/variants", json={"question": "Et par chèque ?"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "entry_not_found"
    assert acme_staff.get("/staff/memory/999999/variants").json()["error"]["code"] == "entry_not_found"
    unknown = acme_staff.delete(f"{base}/999999")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "variant_not_found"
    unknown = acme_staff.post(f"{base}/999999/validate")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "variant_not_found"
    assert len(acme_staff.get(base).json()["items"]) == 1, "nothing half-written"
