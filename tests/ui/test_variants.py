"""The question variants of an entry on the staff page, in a real headless Chromium: listed, added,
refused with the service's reason, validated and removed; checked through the API."""

from __future__ import annotations

import json

from tests.browser import StaffPage
from tests.ui.support import QUESTION, XSS, faq

VARIANT = "Quel pourcentage est retenu au titre de la garantie sur les travaux ?"
LEARNED = "Combien retient-on pour la garantie d'un marché de travaux ?"


def _variants(page: StaffPage, entry_id: int) -> list[dict]:
    return list(page.api.get(f"/staff/memory/{entry_id}/variants").json()["items"])


def test_add_a_variant_and_see_a_refusal_in_words(page: StaffPage) -> None:
    entry = faq(page.api)
    page.sign_in(hash_=f"#/entry/{entry['id']}")
    page.find("#variants-empty")
    page.type("#variant-question", VARIANT)
    page.click("#variant-add")
    page.notice("Variante ajoutée.")
    page.wait_text("#entry-variants tr[data-status='validated'] .variant-question", VARIANT)
    assert [v["question"] for v in _variants(page, entry["id"])] == [VARIANT]
    page.wait_text("#entry-history tr[data-action='add_variant']", VARIANT)

    page.type("#variant-question", QUESTION.upper())
    page.click("#variant-add")
    page.notice("Cette formulation est la question même de l'entrée.")
    page.type("#variant-question", f"{XSS} {VARIANT}", clear=True)
    page.click("#variant-add")
    page.wait_text("#entry-variants tr:last-child .variant-question", XSS)
    assert page.js("return window.__xss") is None, "a wording is shown as text"
    page.screenshot("entry-variants", full=True)


def test_validate_then_remove_a_learned_variant(page: StaffPage) -> None:
    line = {
        "question": QUESTION,
        "answer": "5 %.",
        "variants": [{"question": LEARNED, "status": "learned", "origin": "llm", "confirmations": 1}],
    }
    headers = {"Content-Type": "application/x-ndjson"}
    page.api.post(
        "/staff/memory/import", content=json.dumps(line).encode(), headers=headers
    ).raise_for_status()
    entry_id = page.api.get("/staff/memory").json()["items"][0]["id"]
    page.sign_in(hash_=f"#/entry/{entry_id}")
    page.wait_text("#entry-variants tr[data-status='learned']", "le LLM")
    page.click("#entry-variants button[data-validate-variant]")
    page.notice("Variante validée.")
    page.find("#entry-variants tr[data-status='validated']")
    assert [(v["status"], v["confirmations"]) for v in _variants(page, entry_id)] == [("validated", 2)]
    assert page.all("#entry-variants button[data-validate-variant]") == [], "nothing left to validate"

    page.click("#entry-variants button[data-remove-variant]")
    page.click("dialog[open] #confirm-ok")
    page.notice("Variante retirée.")
    page.find("#variants-empty")
    assert _variants(page, entry_id) == []
    page.find("#entry-history tr[data-action='remove_variant']")
    assert page.all("#entry-history tr[data-action='remove_variant'] button") == [], "not restorable"
