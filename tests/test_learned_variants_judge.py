"""Learned wordings and the LLM judge: its yes confirms a held learned wording, its no does not, and
a wording a client removed is judged afresh when it is learned again (the real service, the fake
upstream answering as the answering model and as the judge)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conftest import client_for
from tests.learned import ASKED, NEAR_ASKED, QUESTION, feedback, learned_entry, lookup, pick, variants
from tests.server import LiveApp, chat
from tests.upstream import FakeUpstream, Reply


@pytest.mark.parametrize("verdict", ["YES same question", "NO, another question"])
def test_the_judge_confirms_a_held_learned_wording_on_yes_only(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream, verdict: str
) -> None:
    live = app_factory(
        memory_similarity_threshold=0.5,
        memory_direct_threshold=0.99,
        memory_verified_direct_threshold=0.99,  # the judge is asked about nothing but the held wording
        memory_judge="on",
        memory_judge_model="judge-model",
    )
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        entry_id = learned_entry(acme, fresh_upstream)
        pick(fresh_upstream, entry_id)
        variant_id = chat(acme, message=ASKED).done["learned_variant_id"]
        assert [r.body["model"] for r in fresh_upstream.requests] == ["test-model", "test-model"]
        fresh_upstream.push(Reply(text=verdict), Reply(text="Un an."))

        reply = chat(acme, message=ASKED)

        judged = fresh_upstream.requests[2].body
        assert judged["model"] == "judge-model"
        assert f"Stored question: {QUESTION}" in judged["messages"][1]["content"], "the pair the LLM made"
        assert f"New question: {ASKED}" in judged["messages"][1]["content"]
        (variant,) = variants(staff, entry_id)
        history = staff.get(f"/staff/memory/{entry_id}/history").json()["items"]
        if verdict.startswith("YES"):
            assert reply.of("cached_response")[0]["matched_question"] == ASKED
            assert variant["confirmations"] == 2
            assert (history[0]["action"], history[0]["actor_code"]) == ("confirm_variant", "judge")
            assert history[0]["after"]["variant_id"] == variant_id
            assert lookup(staff, NEAR_ASKED)["decision"] == "direct", "confirmed: served by vector too"
        else:
            assert reply.done["decision"] == "assisted" and reply.text == "Un an."
            assert variant["confirmations"] == 1 and history[0]["action"] == "add_variant"
            assert reply.done["learned_entry_id"] is None, "the wording is held: no second entry for it"


def test_a_removed_wording_is_judged_afresh_when_it_is_learned_again(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(
        memory_similarity_threshold=0.5,
        memory_direct_threshold=0.99,
        memory_verified_direct_threshold=0.99,
        memory_judge="on",
        memory_judge_model="judge-model",
    )
    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        entry_id = learned_entry(acme, fresh_upstream)
        pick(fresh_upstream, entry_id)
        chat(acme, message=ASKED)
        fresh_upstream.push(Reply(text="YES same question"))
        served = chat(acme, message=ASKED)
        assert served.done["decision"] == "direct", "the judge's yes confirmed the wording"
        assert feedback(acme, served, validated=False)["variant"]["outcome"] == "removed"

        # The LLM picks the same entry for the same wording again: learned anew, with 1 confirmation.
        pick(fresh_upstream, entry_id)
        assert chat(acme, message=ASKED).done["learned_variant_id"] is not None
        judged = sum(r.body["model"] == "judge-model" for r in fresh_upstream.requests)
        fresh_upstream.push(Reply(text="NO, another question"), Reply(text="Un an."))
        again = chat(acme, message=ASKED)

        # The client's no outlived the judge's cached yes: the judge was asked again.
        assert sum(r.body["model"] == "judge-model" for r in fresh_upstream.requests) == judged + 1
        assert again.done["decision"] == "assisted"
        (variant,) = variants(staff, entry_id)
        assert variant["confirmations"] == 1
