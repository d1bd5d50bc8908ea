"""The staff page in a real headless Chromium: the answers an entry served through its question
variants, and their accuracy apart from the others' (issue 14, item 4)."""

from __future__ import annotations

import httpx

from tests.browser import StaffPage
from tests.server import chat
from tests.ui.support import QUESTION, faq, plain

VARIANT = "Combien retient-on au titre de la garantie sur un marché de travaux ?"


def test_the_entry_and_the_stats_show_the_answers_served_through_variants(
    page: StaffPage, acme: httpx.Client
) -> None:
    entry = faq(page.api)
    added = page.api.post(f"/staff/memory/{entry['id']}/variants", json={"question": VARIANT})
    assert added.status_code == 201, added.text
    assert chat(acme, message=QUESTION).done["decision"] == "direct"
    assert chat(acme, message=VARIANT).done["decision"] == "direct"
    through = [h for h in page.api.get("/staff/memory/hits").json()["items"] if h["question"] == VARIANT]
    reviewed = page.api.post(f"/staff/memory/hits/{through[0]['lookup_id']}/review", json={"correct": False})
    assert reviewed.status_code == 200, reviewed.text

    page.sign_in(hash_=f"#/entry/{entry['id']}")
    page.wait_text("#entry-usage", "Servie par une variante")
    assert "1 servies, 1 revues, 1 jugées fausses" in page.text("#entry-usage")

    page.open("#/stats")
    card = "[data-stat='variant_accuracy']"
    page.wait_text(card, "Exactitude des réponses servies par une variante")
    assert plain(page.text(f"{card} .stat-value")) == "0 %", "its one reviewed answer was wrong"
    assert plain(page.text("[data-stat='accuracy'] .stat-value")) == "0 %"
    page.choose("#lang", "en")
    page.wait_text(card, "Accuracy of answers served through a variant")
