"""What the staff page tests share: their sample texts and the API calls that seed or check data."""

from __future__ import annotations

from typing import Any

import httpx

from tests.browser import StaffPage

QUESTION = "Quel est le taux de la retenue de garantie sur un marché de travaux ?"
ANSWER = "La retenue de garantie est de 5 % du montant du marché."
CARBON = "Comment calculer l'empreinte carbone d'une PME ?"
DECENNIAL = "Quelle est la durée de la garantie décennale ?"
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'
KEY_SLOT = "memory-guard.staff-key"


def faq(api: httpx.Client, question: str = QUESTION, answer: str = ANSWER, **extra: Any) -> dict[str, Any]:
    response = api.post("/staff/memory", json={"question": question, "answer": answer, **extra})
    assert response.status_code == 201, response.text
    return dict(response.json())


def entry_of(api: httpx.Client, entry_id: int) -> dict[str, Any]:
    response = api.get(f"/staff/memory/{entry_id}")
    assert response.status_code == 200, response.text
    return dict(response.json())


def row_ids(page: StaffPage, css: str = "tr[data-entry-id]") -> list[str]:
    ids: list[str] = page.js(f"return [...document.querySelectorAll('{css}')].map(r => r.dataset.entryId)")
    return ids


def plain(text: str) -> str:
    """French number formats use (narrow) no-break spaces."""
    return text.replace("\u202f", " ").replace("\xa0", " ")


def finish(page: StaffPage) -> None:
    """Fail on what the page logged, and leave no storage to the next test (same browser)."""
    problems = page.console_problems()
    page.js("sessionStorage.clear(); localStorage.clear();")
    assert not problems, f"the page logged errors: {problems}"
