"""The LLM judge: its verdicts, their cache, its cost in the stats, and the guard using it.

The judge talks to the real OpenAI client against FakeUpstream and keeps its verdicts in a real
database: `store` runs each test of the judge on its own twice, on a SQLite file and on a
PostgreSQL database. The app tests swap in `UnsureVerifier`: with the test embedder the checks
alone never say unsure, and only unsure candidates reach the judge.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_guard.api.app import create_app
from memory_guard.core.clock import utc_now
from memory_guard.core.verdict import Verdict
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.upstream.openai_chat import OpenAIChatModel
from memory_guard.verify.judge import JudgeCall, Judgement, JudgeTotals
from memory_guard.verify.judge_store import SqlJudgementStore
from memory_guard.verify.llm_judge import MAX_ANSWER_CHARS, SYSTEM_PROMPT, LlmJudge
from tests.conftest import make_settings
from tests.fakes import UnsureVerifier
from tests.server import chat
from tests.serving import ThreadedServer
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quelle est la durée de la garantie de parfait achèvement pour un chantier de VRD ?"
ANSWER = "La garantie de parfait achèvement dure un an à compter de la réception des travaux."
# Scores 0.97 against QUESTION with the hashing embedder, and the checks find no difference.
NEAR = "Quelle est la durée de la garantie de parfait achèvement sur un chantier de VRD ?"


@dataclass(frozen=True)
class Stored:
    id: int
    question: str
    answer: str


ENTRY = Stored(7, QUESTION, ANSWER)


@pytest.fixture
def store(any_database: Any) -> SqlJudgementStore:
    return SqlJudgementStore(any_database)


@pytest.fixture
async def judge(fresh_upstream: FakeUpstream, store: SqlJudgementStore) -> AsyncIterator[LlmJudge]:
    model = OpenAIChatModel(
        base_url=fresh_upstream.base_url,
        api_key="sk-test",
        model="judge-model",
        max_tokens=16,
        timeout_s=0.5,
        max_retries=0,
        referer="http://test",
        title="test",
    )
    yield LlmJudge(model, store, utc_now)
    await model.aclose()


# -- the judge on its own ------------------------------------------------------------------


async def test_yes_accepts_and_is_asked_once_per_pair(
    judge: LlmJudge, store: SqlJudgementStore, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="YES: same question, other wording", usage=(80, 4)))

    first = await judge.judge("acme", ENTRY, NEAR, call=True)
    # Case, accents and the closing mark do not make another question.
    again = await judge.judge("acme", ENTRY, NEAR.upper().rstrip(" ?"), call=True)
    looked_up = await judge.judge("acme", ENTRY, NEAR, call=False)

    assert first is not None
    assert (first.verdict, first.by, first.probability) == (Verdict.ACCEPT, "judge", None)
    assert first.reason == "judge: same question, other wording"
    assert again == first and looked_up == first
    assert fresh_upstream.calls == 1
    assert await store.totals("acme") == JudgeTotals(
        calls=1,
        failed=0,
        prompt_tokens=80,
        completion_tokens=4,
        reported_cost=0.0,
        unpriced_calls=1,
        unpriced_prompt_tokens=80,
        unpriced_completion_tokens=4,
    )
    assert await store.totals("globex") == JudgeTotals(0, 0, 0, 0, 0.0)


async def test_a_pair_judged_twice_at_once_keeps_the_later_verdict_and_counts_both_calls(
    store: SqlJudgementStore,
) -> None:
    # Two lookups (two replicas) judged the same pair before either cached its verdict.
    now = utc_now()
    first = JudgeCall("judge-model", "yes", 80, 4, 0.0001)
    later = JudgeCall("judge-model", "no", 90, 3, None)
    await store.put("acme", 7, "e", "q", Judgement(True, "same"), first, now)
    await store.put("acme", 7, "e", "q", Judgement(False, "another guarantee"), later, now)

    assert await store.get("acme", 7, "e", "q") == Judgement(False, "another guarantee")
    assert await store.get("globex", 7, "e", "q") is None
    totals = await store.totals("acme")
    assert totals == JudgeTotals(
        calls=2,
        failed=0,
        prompt_tokens=170,
        completion_tokens=7,
        reported_cost=0.0001,
        unpriced_calls=1,
        unpriced_prompt_tokens=90,
        unpriced_completion_tokens=3,
    )
    assert all(
        type(value) is int for value in (totals.calls, totals.prompt_tokens, totals.unpriced_prompt_tokens)
    )


async def test_no_rejects(judge: LlmJudge, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="NO - another kind of works"))

    verdict = await judge.judge("acme", ENTRY, NEAR, call=True)

    assert verdict is not None
    assert (verdict.verdict, verdict.by, verdict.reason) == (
        Verdict.REJECT,
        "judge",
        "judge: another kind of works",
    )


async def test_staff_lookup_never_calls(judge: LlmJudge, fresh_upstream: FakeUpstream) -> None:
    assert await judge.judge("acme", ENTRY, NEAR, call=False) is None
    assert fresh_upstream.calls == 0


@pytest.mark.parametrize(
    ("reply", "failed"),
    [
        (Reply(text="Probably, it depends on the contract"), False),
        (Reply(text="Yesterday's answer still holds"), False),
        (Reply(status=500), True),
        (Reply(text="YES", delay_s=1.5), True),  # past the judge's timeout
    ],
    ids=["unclear", "not-a-word-yes", "http-500", "timeout"],
)
async def test_no_clear_verdict_leaves_it_unsure_and_uncached(
    reply: Reply, failed: bool, judge: LlmJudge, store: SqlJudgementStore, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(reply, Reply(text="NO"))

    assert await judge.judge("acme", ENTRY, NEAR, call=True) is None
    assert await judge.judge("acme", ENTRY, NEAR, call=False) is None, "nothing cached"
    retried = await judge.judge("acme", ENTRY, NEAR, call=True)
    assert retried is not None and retried.verdict is Verdict.REJECT
    # Both calls are counted; one that got no reply at all counts as failed, with no tokens.
    totals = await store.totals("acme")
    assert (totals.calls, totals.failed) == (2, int(failed))


async def test_an_edited_entry_is_judged_anew(judge: LlmJudge, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="YES"), Reply(text="NO, the duration changed"))
    first = await judge.judge("acme", ENTRY, NEAR, call=True)

    edited = Stored(ENTRY.id, QUESTION, "La garantie dure deux ans.")
    second = await judge.judge("acme", edited, NEAR, call=True)

    assert first is not None and first.verdict is Verdict.ACCEPT
    assert second is not None and second.verdict is Verdict.REJECT
    assert fresh_upstream.calls == 2


async def test_the_prompt_is_short_and_strict(judge: LlmJudge, fresh_upstream: FakeUpstream) -> None:
    long_answer = "a" * MAX_ANSWER_CHARS + "TAIL"
    fresh_upstream.push(Reply(text="YES"))

    await judge.judge("acme", Stored(1, QUESTION, long_answer), NEAR, call=True)

    body = fresh_upstream.requests[0].body
    assert body["model"] == "judge-model" and body["max_tokens"] == 16
    assert "tools" not in body
    system, user = body["messages"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    assert '"YES" or "NO"' in system["content"]
    assert QUESTION in user["content"] and NEAR in user["content"]
    assert "a" * MAX_ANSWER_CHARS in user["content"] and "TAIL" not in user["content"]


# -- the judge in the service ------------------------------------------------------------------


@contextmanager
def unsure_app(tmp_path: Path, upstream: FakeUpstream, **overrides: Any) -> Iterator[str]:
    """The real app, its offline verifier unsure of every candidate; yields its base URL."""
    settings = make_settings(tmp_path, upstream, memory_judge_model="judge-model", **overrides)
    app = create_app(settings, embedder=HashingEmbedder())
    server = ThreadedServer(app, lifespan="on")
    server.start(timeout_s=60)
    try:
        app.state.services.guard.verifier = UnsureVerifier()
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


@contextmanager
def clients(base_url: str) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with (
        httpx.Client(base_url=base_url, headers={"Authorization": "Bearer ka"}, timeout=10) as client,
        httpx.Client(base_url=base_url, headers={"Authorization": "Bearer sa"}, timeout=10) as staff,
    ):
        staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER}).raise_for_status()
        yield client, staff


def staff_lookup(staff: httpx.Client) -> dict[str, Any]:
    found: dict[str, Any] = staff.post("/staff/memory/lookup", json={"question": NEAR}).json()
    return found


def test_judge_yes_serves_direct_once_asked(tmp_path: Path, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="YES same question", usage=(90, 3)))
    with unsure_app(tmp_path, fresh_upstream, memory_judge="on") as url, clients(url) as (c, staff):
        assert staff_lookup(staff)["decision"] == "assisted", "staff lookup must not ask the judge"
        assert fresh_upstream.calls == 0

        first, second = chat(c, message=NEAR), chat(c, message=NEAR)

        (entry,) = staff.get("/staff/memory").json()["items"]
        for reply in (first, second):
            assert reply.kinds == ["cached_response", "done"]
            served = reply.of("cached_response")[0]
            assert (served["entry_id"], served["answer"], served["matched_question"]) == (
                entry["id"],
                ANSWER,
                QUESTION,
            )
            assert served["score"] < 1.0, "a near question, not the stored one"
            assert (reply.done["decision"], reply.done["learned_entry_id"]) == ("direct", None)
        assert fresh_upstream.calls == 1, "the verdict is cached per (entry, question)"
        judged = fresh_upstream.requests[0].body
        assert judged["model"] == "judge-model" and judged["max_tokens"] == 16
        found = staff_lookup(staff)
        assert found["decision"] == "direct"
        assert found["served_entry_id"] == entry["id"]
        candidate = found["candidates"][0]
        assert (candidate["verdict"], candidate["by"], candidate["reason"]) == (
            "accept",
            "judge",
            "judge: same question",
        )
        assert candidate["served"] is True
        hits = staff.get("/staff/memory/hits").json()["items"]
        assert [h["verified_by"] for h in hits] == ["judge", "judge"]
        stats = staff.get("/staff/memory/stats").json()
        assert stats["judge"] == {
            "enabled": True,
            "why": "MEMORY_JUDGE=on",
            "calls": 1,
            "failed": 0,
            "prompt_tokens": 90,
            "completion_tokens": 3,
            "cost": None,  # no price set and none reported
            "currency": "USD",
        }


def test_judge_no_keeps_the_llm_answering(tmp_path: Path, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="NO, not the same scope"), Reply(text="Un an."))
    with unsure_app(tmp_path, fresh_upstream, memory_judge="on") as url, clients(url) as (c, staff):
        reply = chat(c, message=NEAR)

        # The candidate the judge turned down does not ground the LLM either (serve_policy.grounding).
        assert reply.done["decision"] == "miss"
        assert reply.text == "Un an."
        assert [r.body["model"] for r in fresh_upstream.requests] == ["judge-model", "test-model"]
        assert "tools" not in fresh_upstream.requests[1].body or all(
            t["function"]["name"] != "use_memory_answer" for t in fresh_upstream.requests[1].body["tools"]
        )
        # The answer just learned would match exactly; without it the cached verdict shows.
        staff.delete(f"/staff/memory/{reply.done['learned_entry_id']}").raise_for_status()
        candidate = staff_lookup(staff)["candidates"][0]
        assert (candidate["verdict"], candidate["by"]) == ("reject", "judge")
        assert candidate["reason"] == "judge: not the same scope"


def test_judge_off_is_never_asked(tmp_path: Path, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="Un an."))
    with unsure_app(tmp_path, fresh_upstream, memory_judge="off") as url, clients(url) as (c, staff):
        candidate = staff_lookup(staff)["candidates"][0]
        reply = chat(c, message=NEAR)

        assert (candidate["verdict"], candidate["by"]) == ("unsure", "offline")
        assert reply.done["decision"] == "assisted"
        assert [r.body["model"] for r in fresh_upstream.requests] == ["test-model"]
        stats = staff.get("/staff/memory/stats").json()
        assert stats["judge"] == {
            "enabled": False,
            "why": "MEMORY_JUDGE=off",
            "calls": 0,
            "failed": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost": 0.0,  # nothing was spent
            "currency": "USD",
        }
