"""Per-scope floors: a scope whose reviewed served answers prove too often wrong serves less."""

from __future__ import annotations

import math
from collections.abc import Callable

import httpx
import pytest

from memory_guard.core.scope import Scope
from memory_guard.hits.floors import ScopeFloors, learned_floor
from tests.conftest import client_for
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quel est le délai de la garantie de parfait achèvement ?"
POLITE = "Quel est le délai de la garantie de parfait achèvement svp ?"  # same vector, not the same key
ANSWER = "Un an à compter de la réception."


@pytest.mark.parametrize(
    ("reviews", "floor"),
    [
        ([], None),
        ([(0.96, False)] * 10, None),
        ([(0.951, True)], math.nextafter(0.951, math.inf)),
        # One wrong answer among 31 does not show a rate above 2 %.
        ([(0.951, True)] + [(0.97, False)] * 30, None),
        ([(0.951, True), (0.955, True)] + [(0.97, False)] * 5, 0.97),
        # A floor never splits a tie: both answers at 0.96 go, the right one with the wrong one.
        ([(0.96, True), (0.96, False)], math.nextafter(0.96, math.inf)),
    ],
)
def test_learned_floor(reviews: list[tuple[float, bool]], floor: float | None) -> None:
    assert learned_floor(reviews, bound=0.02) == floor


def test_a_looser_bound_raises_nothing() -> None:
    assert learned_floor([(0.951, True), (0.955, True), (0.97, False)], bound=1.0) is None


def test_floors_are_per_scope_and_fall_when_the_reviews_no_longer_show_an_excess() -> None:
    floors = ScopeFloors(bound=0.02)
    p1, p2 = Scope("acme", "default", "P1"), Scope("acme", "default", "P2")
    floors.learn(p1, [(0.96, True)])
    assert floors.floor(p1) > 0.96 and floors.floor(p2) == 0.0
    assert [f.scope for f in floors.raised("acme")] == [p1] and floors.raised("globex") == []
    floors.learn(p1, [(0.96, False)])
    assert floors.floor(p1) == 0.0 and floors.raised("acme") == []


def _politely(client: httpx.Client, project: str | None = None) -> str:
    return str(chat(client, message=POLITE, project=project).done["decision"])


def test_a_wrong_served_answer_raises_its_scopes_floor_and_only_there(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(memory_cross_encoder="off")  # the checks' yes; the floor binds any verdict
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        for project in (None, "P2"):
            staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER, "project": project})
        served = chat(acme, message=POLITE)
        assert served.done["decision"] == "direct"
        hit = staff.get("/staff/memory/hits").json()["items"][0]
        assert hit["verdict"] != "exact"
        staff.post(
            f"/staff/memory/hits/{hit['lookup_id']}/review", json={"correct": False}
        ).raise_for_status()

        raised = staff.get("/staff/memory/stats").json()["served"]["raised_floors"]
        assert [(f["project"], f["reviewed"], f["wrong"]) for f in raised] == [("", 1, 1)]
        assert raised[0]["floor"] >= hit["score"]
        inspected = staff.post("/staff/memory/lookup", json={"question": POLITE}).json()
        assert inspected["decision"] == "assisted" and inspected["scope_floor"] == raised[0]["floor"]
        assert _politely(acme, project="P2") == "direct", "another scope keeps its floor"
        assert chat(acme, message=QUESTION).done["decision"] == "direct", "exact matches are exempt"
        fresh_upstream.push(Reply(text="Un an."))
        assert _politely(acme) == "assisted", "the same cosine hit is no longer served in this scope"

    live.restart()
    with client_for(live, "ka") as acme:
        # Another polite wording: the one above was learned from the LLM's answer (an exact match now).
        fresh_upstream.push(Reply(text="Un an."))
        again = chat(acme, message=f"{QUESTION} Merci d'avance")
        assert again.done["decision"] == "assisted", "floors are learned again from the stored reviews"


def test_right_reviews_and_switching_floors_off_leave_serving_as_it_was(
    app_factory: Callable[..., LiveApp],
) -> None:
    live = app_factory(memory_scope_floors=False, memory_cross_encoder="off")
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER})
        assert _politely(acme) == "direct"
        lookup_id = staff.get("/staff/memory/hits").json()["items"][0]["lookup_id"]
        staff.post(f"/staff/memory/hits/{lookup_id}/review", json={"correct": False}).raise_for_status()
        assert _politely(acme) == "direct", "MEMORY_SCOPE_FLOORS=false"
        assert staff.get("/staff/memory/stats").json()["served"]["raised_floors"] == []

    live = app_factory(
        memory_db_path=live.settings.memory_db_path.with_name("right.db"), memory_cross_encoder="off"
    )
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER})
        for _ in range(3):
            assert _politely(acme) == "direct"
        for hit in staff.get("/staff/memory/hits").json()["items"]:
            staff.post(f"/staff/memory/hits/{hit['lookup_id']}/review", json={"correct": True})
        assert _politely(acme) == "direct"
        assert staff.get("/staff/memory/stats").json()["served"]["raised_floors"] == []
