"""Tags are cleaned the same way on every path an entry takes in: trimmed, blanks and repeats
dropped, the first spelling kept in its place."""

from __future__ import annotations

import json

import httpx

from memory_guard.memory.entry import clean_tags
from tests.server import chat
from tests.upstream import FakeUpstream, Reply

RAW = ["  marchés ", "garantie", "", "marchés", "   ", "garantie ", "BTP"]
CLEAN = ["marchés", "garantie", "BTP"]


def test_clean_tags_trims_and_drops_blanks_and_repeats_in_order() -> None:
    assert clean_tags(RAW) == CLEAN
    assert clean_tags([]) == []


def test_every_entry_path_cleans_tags_alike(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream
) -> None:
    created = acme_staff.post(
        "/staff/memory",
        json={"question": "Quel est le délai de paiement ?", "answer": "30 jours.", "tags": RAW},
    )
    assert created.status_code == 201, created.text
    assert created.json()["tags"] == CLEAN

    patched = acme_staff.patch(f"/staff/memory/{created.json()['id']}", json={"tags": [*RAW, "lot 2"]})
    assert patched.status_code == 200, patched.text
    assert patched.json()["tags"] == [*CLEAN, "lot 2"]

    line = {"question": "Combien dure la garantie décennale ?", "answer": "Dix ans.", "tags": RAW}
    imported = acme_staff.post(
        "/staff/memory/import",
        content=json.dumps(line, ensure_ascii=False).encode(),
        headers={"content-type": "application/x-ndjson"},
    )
    assert imported.status_code == 200, imported.text
    found = acme_staff.get("/staff/memory", params={"query": "garantie décennale", "limit": 1}).json()[
        "items"
    ]
    assert found[0]["question"] == line["question"] and found[0]["tags"] == CLEAN

    # What the gateway learns by itself carries no tags: the same cleaning of none.
    fresh_upstream.push(Reply(text="Le préavis est de deux mois."))
    done = chat(acme, message="Quel est le délai de préavis pour résilier un marché public ?").done
    learned = acme_staff.get(f"/staff/memory/{done['learned_entry_id']}").json()
    assert learned["tags"] == clean_tags([])
