"""The proposals screen in a real headless Chromium: staff accept and reject what clients proposed."""

from __future__ import annotations

from typing import Any

import httpx

from tests.browser import StaffPage
from tests.conftest import client_for
from tests.server import chat
from tests.ui.support import ANSWER, QUESTION, XSS, entry_of, faq

CORRECTED = "La retenue de garantie est plafonnée à 5 % du montant initial du marché."


def _propose(client: httpx.Client, **body: Any) -> int:
    """A client is served the FAQ's answer and sends feedback on it; the proposal's id."""
    reply = chat(client, message=QUESTION)
    assert reply.done["decision"] == "direct"
    run = reply.done
    response = client.post(f"/chat/{run['conversation_id']}/messages/{run['message_id']}/feedback", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["outcome"] == "proposed"
    return int(response.json()["proposal_id"])


def _card(proposal_id: int) -> str:
    return f'article[data-proposal-id="{proposal_id}"]'


def test_staff_accept_a_correction_from_the_page(page: StaffPage) -> None:
    entry = faq(page.api)
    with client_for(page.live, "ka") as client:
        corrected = _propose(client, validated=False, corrected_answer=CORRECTED)
        retire = _propose(client, validated=False)
    page.sign_in(hash_="#/proposals")
    page.wait_text("nav a[aria-current=page]", "Propositions")
    page.wait_text(_card(corrected), CORRECTED)
    card = page.find(_card(corrected))
    assert ANSWER in card.text, "the current answer is shown next to the proposed one"
    assert "correction" in card.text and "clé client " in card.text, "who proposed, in French"
    assert "retirée" not in page.text(_card(retire)) and "ne soit plus servie" in page.text(_card(retire))
    page.screenshot("proposals")

    page.click(f'{_card(corrected)} button[data-act="accept"]')
    page.notice(f"Proposition n° {corrected} acceptée")
    assert entry_of(page.api, entry["id"])["answer"] == CORRECTED
    assert page.all(_card(corrected)) == [], "the accepted one left the pending list"

    page.type(f"#proposal-{retire}-reason", "La réponse reste juste.")
    page.click(f'{_card(retire)} button[data-act="reject"]')
    page.notice(f"Proposition n° {retire} rejetée")
    rejected = page.api.get(f"/staff/memory/proposals/{retire}").json()
    assert (rejected["status"], rejected["reason"]) == ("rejected", "La réponse reste juste.")
    assert entry_of(page.api, entry["id"])["status"] == "validated"
    page.wait_text("#proposals-summary", "Aucune proposition")

    page.choose("#proposals-status", "rejected")
    page.click("#proposals-filters button[type=submit]")
    page.wait_text(_card(retire), "La réponse reste juste.")
    assert "status=rejected" in page.driver.current_url


def test_an_entry_changed_since_is_applied_only_when_staff_confirm(page: StaffPage) -> None:
    entry = faq(page.api)
    with client_for(page.live, "ka") as client:
        proposal = _propose(client, validated=True, corrected_answer=XSS)
    rewritten = "Cinq pour cent, retenus sur chaque acompte."
    page.api.patch(f"/staff/memory/{entry['id']}", json={"answer": rewritten}).raise_for_status()

    page.sign_in(hash_="#/proposals")
    page.wait_text(_card(proposal), "L'entrée a changé depuis cette proposition")
    assert XSS in page.text(_card(proposal)), "the proposed text is shown as text, never run"
    page.click(f'{_card(proposal)} button[data-act="accept"]')
    page.wait_text("dialog.confirm", rewritten)
    page.click("#confirm-cancel")
    assert entry_of(page.api, entry["id"])["answer"] == rewritten, "cancelled: nothing applied"

    page.click(f'{_card(proposal)} button[data-act="accept"]')
    page.wait_text("dialog.confirm", "Appliquer la proposition quand même")
    page.click("#confirm-ok")
    page.notice(f"Proposition n° {proposal} acceptée")
    assert entry_of(page.api, entry["id"])["answer"] == XSS
    assert page.js("return window.__xss === undefined") is True
