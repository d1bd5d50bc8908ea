"""Hostile input at the edge (issue 11, findings 1 and 7): dates, huge integers, odd text and JSON.

Each is refused with a 4xx JSON naming what is wrong, writes nothing, and leaves the service able
to list, export and restart.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime

import httpx
import pytest

from memory_guard.core.clock import from_text, to_text
from tests.conftest import client_for
from tests.server import LiveApp, chat

NDJSON = {"Content-Type": "application/x-ndjson"}
LINE = {"question": "Quel est le taux de la retenue de garantie ?", "answer": "5 %"}
BAD_MOMENTS = [
    "0001-01-01T00:00:00Z",
    "0999-06-01T00:00:00Z",
    "9999-12-31T23:59:59-05:00",  # overflows once converted to UTC
    "9999-12-31T23:59:59Z",
    "1969-12-31T23:59:59Z",
]
HUGE = [2**63, 10**30]


def _error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    return str(error["message"])


def _entry(staff: httpx.Client) -> dict:
    response = staff.post("/staff/memory", json={"question": "Délai de paiement ?", "answer": "30 jours"})
    assert response.status_code == 201, response.text
    return dict(response.json())


def _import(staff: httpx.Client, rows: list[object]) -> httpx.Response:
    body = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows).encode()
    return staff.post("/staff/memory/import", content=body, headers=NDJSON)


# Dates (finding 1) ---------------------------------------------------------------------------------


def test_clock_text_is_fixed_width_sortable_and_reads_back() -> None:
    moments = [datetime(year, 6, 1, 12, 30, tzinfo=UTC) for year in (1, 999, 1970, 2026, 9999)]
    texts = [to_text(moment) for moment in moments]
    assert {len(text) for text in texts} == {len("2026-06-01T12:30:00.000000Z")}
    assert texts[1] == "0999-06-01T12:30:00.000000Z"
    assert sorted(texts) == texts, "text order is time order"
    assert [from_text(text) for text in texts] == moments
    # What the old writer left in a row for a year under 1000 still reads.
    assert from_text("1-01-01T00:00:00.000000Z") == datetime(1, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("moment", BAD_MOMENTS)
def test_a_patch_with_a_date_out_of_range_is_refused_and_writes_nothing(
    live: LiveApp, acme_staff: httpx.Client, moment: str
) -> None:
    entry = _entry(acme_staff)
    message = _error(
        acme_staff.patch(f"/staff/memory/{entry['id']}", json={"expires_at": moment}), 422, "invalid_request"
    )
    assert "expires_at" in message and "1970-01-01" in message
    assert acme_staff.get(f"/staff/memory/{entry['id']}").json() == entry
    assert [
        event["action"] for event in acme_staff.get(f"/staff/memory/{entry['id']}/history").json()["items"]
    ] == ["create"]
    assert [item["id"] for item in acme_staff.get("/staff/memory").json()["items"]] == [entry["id"]]
    assert len(acme_staff.get("/staff/memory/export").text.splitlines()) == 1
    live.restart()
    assert acme_staff.get(f"/staff/memory/{entry['id']}").json() == entry


def test_dates_inside_the_range_are_kept_and_a_date_without_offset_is_utc(
    live: LiveApp, acme_staff: httpx.Client
) -> None:
    entry = _entry(acme_staff)
    for given, stored in [
        ("2020-01-01T05:00:00+05:00", "2020-01-01T00:00:00.000000Z"),
        ("2020-01-02T00:00:00", "2020-01-02T00:00:00.000000Z"),
        ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000000Z"),
    ]:
        response = acme_staff.patch(f"/staff/memory/{entry['id']}", json={"expires_at": given})
        assert response.status_code == 200, response.text
        assert response.json()["expires_at"] == stored
    live.restart()
    assert (
        acme_staff.get(f"/staff/memory/{entry['id']}").json()["expires_at"] == "1970-01-01T00:00:00.000000Z"
    )


@pytest.mark.parametrize("moment", BAD_MOMENTS)
def test_an_import_line_with_a_date_out_of_range_is_a_numbered_bad_line(
    live: LiveApp, acme_staff: httpx.Client, moment: str
) -> None:
    response = _import(acme_staff, [LINE, {**LINE, "question": "Autre ?", "expires_at": moment}])
    _error(response, 422, "invalid_import")
    (bad,) = response.json()["error"]["lines"]
    assert bad["line"] == 2 and "expires_at" in bad["message"]
    assert acme_staff.get("/staff/memory").json()["items"] == []
    assert acme_staff.get("/staff/memory/export").text == ""
    live.restart()
    assert acme_staff.get("/staff/memory").status_code == 200


@pytest.mark.parametrize(
    "params",
    [{"created_to": "9999-12-31"}, {"created_from": "0001-01-01"}, {"created_from": "0999-06-01"}],
)
def test_date_filters_out_of_range_are_refused(acme_staff: httpx.Client, params: dict[str, str]) -> None:
    for path in ("/staff/memory", "/staff/memory/export"):
        message = _error(acme_staff.get(path, params=params), 422, "invalid_request")
        assert next(iter(params)) in message


def test_a_database_holding_an_unpadded_year_still_starts(live: LiveApp, acme_staff: httpx.Client) -> None:
    """A row written by the old writer before this fix must not keep the service from starting."""
    entry = _entry(acme_staff)
    with sqlite3.connect(live.settings.memory_db_path) as db:
        db.execute(
            "UPDATE responses SET expires_at = '1-01-01T00:00:00.000000Z' WHERE id = ?", (entry["id"],)
        )
    live.restart()
    again = acme_staff.get(f"/staff/memory/{entry['id']}")
    assert again.status_code == 200 and again.json()["expires_at"] == "0001-01-01T00:00:00.000000Z"


# Integers beyond SQLite's (finding 7) --------------------------------------------------------------


@pytest.mark.parametrize("number", HUGE)
def test_huge_ids_and_cursors_are_4xx_json(acme: httpx.Client, acme_staff: httpx.Client, number: int) -> None:
    calls = [
        ("GET", f"/staff/memory/{number}", None),
        ("PATCH", f"/staff/memory/{number}", {"answer": "x"}),
        ("DELETE", f"/staff/memory/{number}", None),
        ("POST", f"/staff/memory/{number}/validate", None),
        ("POST", f"/staff/memory/{number}/obsolete", None),
        ("GET", f"/staff/memory/{number}/history", None),
        ("GET", f"/staff/memory/{number}/usage", None),
        ("POST", f"/staff/memory/hits/{number}/review", {"correct": True}),
        ("POST", f"/staff/memory/audit/{number}/restore", None),
        ("GET", f"/staff/memory/audit?entry_id={number}", None),
        ("GET", f"/staff/memory/audit?cursor={number}", None),
        ("GET", f"/staff/memory/hits?cursor={number}", None),
        ("GET", f"/staff/memory?cursor={number}", None),
        ("GET", f"/staff/memory?query=délai&cursor={number}", None),
    ]
    for method, path, body in calls:
        response = acme_staff.request(method, path, json=body)
        assert response.status_code in (404, 422), (method, path, response.status_code, response.text)
        assert response.json()["error"]["code"]
    reply = chat(acme, message="Quel est le délai de paiement ?")
    conversation = reply.of("done")[0]["conversation_id"] if reply.of("done") else "nope"
    feedback = acme.post(f"/chat/{conversation}/messages/{number}/feedback", json={"validated": True})
    assert feedback.status_code in (404, 422) and feedback.json()["error"]["code"]


def test_a_cursor_of_unicode_digits_is_refused(acme_staff: httpx.Client) -> None:
    # str.isdigit() accepts "²", which int() then refuses: the cursor is checked as ASCII digits.
    for path, cursor in [
        ("/staff/memory", "²"),
        ("/staff/memory/audit", "²"),
        ("/staff/memory?query=délai", "²:1"),
        ("/staff/memory?query=délai", "1:99999999999999999999"),
    ]:
        assert _error(acme_staff.get(path, params={"cursor": cursor}), 422, "invalid_cursor")


# Odd text and JSON (finding 7, finding 2's fields) -----------------------------------------------


def test_a_lone_surrogate_in_a_message_is_refused_before_the_stream(acme: httpx.Client) -> None:
    body = b'{"message": "Bonjour \\ud800 quel est le d\\u00e9lai ?"}'
    response = acme.post("/chat", content=body, headers={"content-type": "application/json"})
    assert "message" in _error(response, 422, "invalid_request")
    assert response.headers["content-type"].startswith("application/json")


def test_a_lone_surrogate_in_free_form_json_is_refused(acme: httpx.Client, acme_staff: httpx.Client) -> None:
    """Strings with a length limit were already refused by pydantic; free-form JSON was not: a profile
    failed the run after its stream had begun (internal_error), and metadata made the import a 500."""
    body = b'{"message": "Bonjour ?", "entreprise": {"nom": "ACME \\ud800"}}'
    response = acme.post("/chat", content=body, headers={"content-type": "application/json"})
    assert "entreprise" in _error(response, 422, "invalid_profile")
    response = _import(acme_staff, ['{"question": "Q ?", "answer": "R", "metadata": {"note": "\\ud800"}}'])
    _error(response, 422, "invalid_import")
    assert "metadata" in response.json()["error"]["lines"][0]["message"]
    body = b'{"question": "Q \\udfff ?", "answer": "R"}'
    response = acme_staff.post("/staff/memory", content=body, headers={"content-type": "application/json"})
    assert "question" in _error(response, 422, "invalid_request")
    assert acme_staff.get("/staff/memory").json()["items"] == []
    assert acme_staff.get("/staff/memory/export").status_code == 200


@pytest.mark.parametrize("depth", [40, 5000])
def test_deeply_nested_metadata_is_a_numbered_bad_line(acme_staff: httpx.Client, depth: int) -> None:
    deep = '{"question": "Q ?", "answer": "R", "metadata": ' + '{"a": ' * depth + "1" + "}" * depth + "}"
    response = _import(acme_staff, [LINE, deep])
    _error(response, 422, "invalid_import")
    (bad,) = response.json()["error"]["lines"]
    assert bad["line"] == 2 and "nested" in bad["message"]
    assert acme_staff.get("/staff/memory").json()["items"] == []


def test_free_text_fields_have_a_size(acme: httpx.Client, acme_staff: httpx.Client) -> None:
    profile = {"secteur": "BTP", "notes": "x" * 30_000}
    message = _error(
        acme.post("/chat", json={"message": "Bonjour ?", "entreprise": profile}), 422, "invalid_profile"
    )
    assert "entreprise" in message and "20000" in message
    nested: dict = {}
    for _ in range(40):
        nested = {"n": nested}
    assert "entreprise" in _error(
        acme.post("/chat", json={"message": "Bonjour ?", "entreprise": nested}), 422, "invalid_profile"
    )
    long_tag = {"question": "Q ?", "answer": "R", "tags": ["t" * 201]}
    assert "tags" in _error(acme_staff.post("/staff/memory", json=long_tag), 422, "invalid_request")
    response = _import(acme_staff, [{**LINE, "metadata": {"notes": "x" * 30_000}}])
    assert "metadata" in response.json()["error"]["lines"][0]["message"]


def test_a_staff_key_reaches_every_check_a_client_key_does(live: LiveApp) -> None:
    """The staff key may chat too: the same refusals apply to it."""
    with client_for(live, "sa") as staff:
        body = b'{"message": "\\ud800"}'
        response = staff.post("/chat", content=body, headers={"content-type": "application/json"})
        _error(response, 422, "invalid_request")
