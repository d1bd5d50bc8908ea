"""The staff page in a real headless Chromium: the served answers to review, and the page speaking
French for what the server sends in English (verifier reasons, actors, errors), with its plurals.
"""

from __future__ import annotations

import httpx

from tests.browser import StaffPage
from tests.server import chat
from tests.ui.support import ANSWER, QUESTION, faq, plain


def _served(page: StaffPage, acme: httpx.Client, question: str) -> None:
    assert chat(acme, message=question).done["decision"] == "direct"


def _hits(page: StaffPage, review: str) -> list[dict]:
    response = page.api.get("/staff/memory/hits", params={"review": review})
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def test_review_the_served_answers(page: StaffPage, acme: httpx.Client) -> None:
    entry = faq(page.api)
    _served(page, acme, QUESTION)
    _served(page, acme, QUESTION.upper())
    page.wait(lambda d: len(_hits(page, "none")) == 2, "two served answers logged")
    newest, oldest = _hits(page, "none")

    page.sign_in(hash_="#/hits")
    page.wait(lambda d: len(page.all("article[data-lookup-id]")) == 2, "two served answers to review")
    card = f"article[data-lookup-id='{newest['lookup_id']}']"
    page.wait_text(f"{card} .asked", QUESTION.upper())
    assert page.text(f"{card} .answer") == ANSWER
    assert QUESTION in page.text(f"{card} .matched")
    assert page.find(f"{card} a").get_attribute("href").endswith(f"#/entry/{entry['id']}")
    assert "même question" in page.text(f"{card} .hit-meta")
    assert "null" not in page.text(card) and not page.all(f"{card} .changed")
    page.wait_text("#hits-summary", "2 réponses servies affichées.")
    page.screenshot("hits")

    page.click(f"{card} button[data-review='wrong']")
    page.notice(f"Réponse servie n° {newest['lookup_id']} notée fausse.")
    page.wait_text(f"{card} .review-state", "Revue : fausse (vous).")
    assert [h["lookup_id"] for h in _hits(page, "wrong")] == [newest["lookup_id"]]
    other = f"article[data-lookup-id='{oldest['lookup_id']}']"
    page.click(f"{other} button[data-review='right']")
    page.notice("notée correcte")
    assert [h["lookup_id"] for h in _hits(page, "right")] == [oldest["lookup_id"]]

    # Reviewed answers leave the default list; the filter brings them back, with who reviewed them.
    page.driver.refresh()
    page.wait_text("#hits-summary", "Aucune réponse servie à afficher.")
    page.choose("#hits-review", "wrong")
    page.wait_text(f"{card} .review-state", "Revue : fausse (clé staff ")
    page.choose("#lang", "en")
    page.wait_text(f"{card} .review-state", "Reviewed: wrong (staff key ")
    page.wait_text("#hits-summary", "1 served answer shown.")


def test_the_french_page_words_what_the_server_sends_in_english(page: StaffPage, acme: httpx.Client) -> None:
    entry = faq(page.api)
    _served(page, acme, QUESTION)
    (hit,) = _hits(page, "none")
    page.api.post(f"/staff/memory/hits/{hit['lookup_id']}/review", json={"correct": False}).raise_for_status()

    page.sign_in()
    page.wait_text("#list-summary", "1 entrée affichée.")

    # The verifier's reason, in French, and back in English on demand.
    page.open("#/lookup")
    page.type("#lookup-question", QUESTION.replace("marché de travaux", "marché de 30 000 € de travaux"))
    page.click("#lookup-submit")
    row = f"#lookup-result tr[data-entry-id='{entry['id']}'] td.reason"
    page.wait_text(row, "les nombres diffèrent : aucun contre 30 000")
    page.choose("#lang", "en")
    page.click("#lookup-submit")
    page.wait_text(row, "numbers differ: none vs 30 000")
    page.choose("#lang", "fr")

    # Actors: the service's own, and a key named by its digest.
    page.open("#/audit")
    page.wait_text("tr[data-event-id] td.actor", "clé staff ")

    # A refused FAQ says why in French, naming the entry that holds the question.
    page.open("#/faq")
    page.type("#faq-question", QUESTION)
    page.type("#faq-answer", "10 %")
    page.click("#faq-submit")
    page.notice(f"Erreur 409 : L'entrée n° {entry['id']} a déjà cette question dans cette portée")

    # One reviewed answer, one wrong: singular words.
    page.open("#/stats")
    page.wait(
        lambda d: "1 revue, dont 1 fausse" in plain(page.text("[data-stat='accuracy']")),
        "the accuracy card says 1 revue, dont 1 fausse",
    )
