"""MEMORY_JUDGE=auto: the judge runs when an LLM upstream is configured, on the candidates
MEMORY_JUDGE_READS names, and its calls, tokens and cost show in the staff's stats.

The real app is served by uvicorn against FakeUpstream; the app tests swap in `UnsureVerifier`
where a candidate must reach the judge (with the test embedder the checks never say unsure).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_guard.api.app import create_app
from memory_guard.db.database import Database
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.memory.stats import JudgePrice
from memory_guard.services import Services
from memory_guard.settings import OPENROUTER_URL, Settings
from memory_guard.upstream.llm import TextDelta, TurnEnd
from memory_guard.upstream.openai_chat import OpenAIChatModel
from memory_guard.verify.judge import JudgeTotals
from memory_guard.verify.judge_store import SqlJudgementStore
from memory_guard.verify.judge_switch import judge_switch
from tests.conftest import make_settings
from tests.fakes import UnsureVerifier
from tests.server import ChatReply, chat
from tests.serving import ThreadedServer
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quelle est la durée de la garantie de parfait achèvement pour un chantier de VRD ?"
ANSWER = "La garantie de parfait achèvement dure un an à compter de la réception des travaux."
# Three other wordings the hashing embedder scores above 0.9 against QUESTION, the checks passing.
NEAR = (
    "Quelle est la durée de la garantie de parfait achèvement sur un chantier de VRD ?",
    "Quelle est la durée de la garantie de parfait achèvement pour les chantiers de VRD ?",
    "Quelle durée pour la garantie de parfait achèvement pour un chantier de VRD ?",
)


@contextmanager
def served(
    tmp_path: Path, upstream: FakeUpstream, *, unsure: bool = True, **overrides: Any
) -> Iterator[tuple[Services, httpx.Client, httpx.Client]]:
    """The real app with QUESTION stored; yields its services, a client and a staff client."""
    settings = make_settings(tmp_path, upstream, memory_judge_model="judge-model", **overrides)
    app = create_app(settings, embedder=HashingEmbedder())
    server = ThreadedServer(app, lifespan="on")
    server.start(timeout_s=60)
    url = f"http://127.0.0.1:{server.port}"
    try:
        services: Services = app.state.services
        if unsure:
            services.guard.verifier = UnsureVerifier()
        with (
            httpx.Client(base_url=url, headers={"Authorization": "Bearer ka"}, timeout=10) as client,
            httpx.Client(base_url=url, headers={"Authorization": "Bearer sa"}, timeout=10) as staff,
        ):
            staff.post("/staff/memory", json={"question": QUESTION, "answer": ANSWER}).raise_for_status()
            yield services, client, staff
    finally:
        server.stop()


def judge_requests(upstream: FakeUpstream) -> int:
    return sum(1 for r in upstream.requests if r.body.get("model") == "judge-model")


def forget_learned(staff: httpx.Client, reply: ChatReply) -> None:
    """Delete what the LLM's answer taught, so that the next wording meets QUESTION's entry alone."""
    learned = reply.done["learned_entry_id"]
    if learned is not None:
        staff.delete(f"/staff/memory/{learned}").raise_for_status()


# -- auto, on, off --------------------------------------------------------------------------------


def test_auto_with_an_upstream_judges_an_unsure_candidate_and_serves_its_yes(
    tmp_path: Path, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="YES same need", usage=(90, 3)))
    with served(tmp_path, fresh_upstream, memory_judge="auto") as (services, client, staff):
        reply = chat(client, message=NEAR[0])

        assert services.judge_model is not None
        assert reply.kinds == ["cached_response", "done"]
        assert reply.of("cached_response")[0]["answer"] == ANSWER
        assert reply.done["decision"] == "direct"
        assert [r.body["model"] for r in fresh_upstream.requests] == ["judge-model"]
        stats = staff.get("/staff/memory/stats").json()["judge"]
        assert stats["enabled"] is True
        assert stats["why"] == "MEMORY_JUDGE=auto and an LLM upstream is configured (LLM_API_KEY is set)"


def test_auto_without_an_upstream_builds_no_judge(tmp_path: Path, fresh_upstream: FakeUpstream) -> None:
    # No key, and the default base URL (OpenRouter, which takes none): no upstream is configured.
    unconfigured = {"llm_api_key": "", "llm_base_url": OPENROUTER_URL}
    with served(tmp_path, fresh_upstream, memory_judge="auto", **unconfigured) as (services, client, staff):
        reply = chat(client, message=NEAR[0])

        assert services.judge_model is None and services.guard.judge is None
        assert fresh_upstream.calls == 0
        # Unsure and unjudged, the candidate only grounds an LLM that is not there.
        assert [e["code"] for e in reply.of("error")] == ["llm_not_configured"]
        stats = staff.get("/staff/memory/stats").json()["judge"]
        assert (stats["enabled"], stats["calls"]) == (False, 0)
        assert "LLM_API_KEY is empty" in stats["why"]


def test_on_without_an_upstream_is_off_and_says_why(tmp_path: Path, fresh_upstream: FakeUpstream) -> None:
    unconfigured = {"llm_api_key": "", "llm_base_url": OPENROUTER_URL}
    with served(tmp_path, fresh_upstream, memory_judge="on", **unconfigured) as (services, _client, staff):
        assert services.judge_model is None
        stats = staff.get("/staff/memory/stats").json()["judge"]
        assert stats["enabled"] is False
        assert stats["why"] == "MEMORY_JUDGE=on and no LLM upstream is configured (LLM_API_KEY is empty)"


def test_off_with_an_upstream_builds_no_judge(tmp_path: Path, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="Un an."))
    with served(tmp_path, fresh_upstream, memory_judge="off") as (services, client, _staff):
        reply = chat(client, message=NEAR[0])

        assert services.judge_model is None
        assert reply.done["decision"] == "assisted"
        assert [r.body["model"] for r in fresh_upstream.requests] == ["test-model"]


def test_the_judge_reads_the_checks_yes_and_leaves_their_number_veto(
    tmp_path: Path, fresh_upstream: FakeUpstream
) -> None:
    """MEMORY_JUDGE_READS=every_hit (the default): a candidate the checks accept is served only on
    the judge's yes; one they refuse for another number is neither judged nor given as grounding."""
    fresh_upstream.push(
        Reply(text="YES same need"),
        Reply(text="NO, another scope"),
        Reply(text="Un an."),
        Reply(text="Deux ans."),
    )
    with served(tmp_path, fresh_upstream, unsure=False, memory_judge="auto") as (_, client, staff):
        accepted = chat(client, message=NEAR[0])
        forget_learned(staff, accepted)
        overruled = chat(client, message=NEAR[1])
        forget_learned(staff, overruled)
        refused = chat(client, message=QUESTION.replace("un chantier", "2 chantiers"))

        assert accepted.done["decision"] == "direct"
        assert overruled.done["decision"] == "miss"  # the checks said yes, the judge no
        assert refused.done["decision"] == "miss"
        assert refused.text == "Deux ans."
        models = [r.body["model"] for r in fresh_upstream.requests]
        assert models == ["judge-model", "judge-model", "test-model", "test-model"]
        # The LLM that answered the refused question was not shown the other number's answer.
        assert ANSWER not in json.dumps(fresh_upstream.requests[-1].body)


def test_reads_unsure_leaves_the_checks_yes_unjudged(tmp_path: Path, fresh_upstream: FakeUpstream) -> None:
    settings = {"memory_judge": "auto", "memory_judge_reads": "unsure"}
    with served(tmp_path, fresh_upstream, unsure=False, **settings) as (services, client, _):
        accepted = chat(client, message=NEAR[0])

        assert services.judge_model is not None
        assert accepted.done["decision"] == "direct"
        assert judge_requests(fresh_upstream) == 0


# -- what it costs --------------------------------------------------------------------------------


def test_the_stats_show_the_judges_calls_tokens_and_cost(
    tmp_path: Path, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(
        Reply(text="YES", usage=(100, 2), cost=0.0002),  # OpenRouter's own figure
        Reply(text="NO, another scope", usage=(120, 3)),  # no cost: priced by the settings
        Reply(text="Un an."),
        Reply(status=500),  # no reply: counted as failed
        Reply(text="Un an, toujours."),
    )
    prices = {"memory_judge_price_input_per_mtok": 1.0, "memory_judge_price_output_per_mtok": 2.0}
    with served(tmp_path, fresh_upstream, memory_judge="auto", **prices) as (_, client, staff):
        replies = []
        for wording in NEAR:
            replies.append(reply := chat(client, message=wording))
            forget_learned(staff, reply)
        again = chat(client, message=NEAR[0])  # its verdict is cached: no call

        # The judge's no leaves nothing to ground the LLM; without a verdict (the 500) the
        # candidate stays unsure and grounds it.
        assert [r.done["decision"] for r in replies] == ["direct", "miss", "assisted"]
        assert again.done["decision"] == "direct"
        assert judge_requests(fresh_upstream) == 3
        judge = staff.get("/staff/memory/stats").json()["judge"]
        assert judge == {
            "enabled": True,
            "why": "MEMORY_JUDGE=auto and an LLM upstream is configured (LLM_API_KEY is set)",
            "calls": 3,
            "failed": 1,
            "prompt_tokens": 220,
            "completion_tokens": 5,
            # 0.0002 reported, and 120 prompt tokens at 1.0 and 3 completion tokens at 2.0 per million.
            "cost": pytest.approx(0.0002 + 0.000126, abs=1e-9),
            "currency": "USD",
        }
        with httpx.Client(
            base_url=str(staff.base_url), headers={"Authorization": "Bearer sb"}, timeout=10
        ) as globex_staff:
            other = globex_staff.get("/staff/memory/stats").json()["judge"]
        assert (other["calls"], other["prompt_tokens"], other["cost"]) == (0, 0, 0.0), "counted per tenant"


def test_without_a_price_an_unreported_cost_is_unknown() -> None:
    unknown = JudgePrice(None, None)
    reported = JudgeTotals(calls=2, failed=0, prompt_tokens=10, completion_tokens=2, reported_cost=0.5)
    one_unreported = JudgeTotals(
        calls=2,
        failed=0,
        prompt_tokens=10,
        completion_tokens=2,
        reported_cost=0.25,
        unpriced_calls=1,
        unpriced_prompt_tokens=4,
        unpriced_completion_tokens=1,
    )

    assert unknown.cost(reported) == 0.5
    assert unknown.cost(one_unreported) is None
    assert JudgePrice(1.0, None).cost(one_unreported) is None, "half a price is no price"
    assert JudgePrice(0.0, 0.0).cost(one_unreported) == 0.25, "0 says free, not unknown"
    assert JudgePrice(1e6, 1e6).cost(one_unreported) == pytest.approx(0.25 + 4 + 1)


async def test_the_upstreams_own_cost_is_read_and_a_strange_one_ignored(fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(text="YES", cost=0.00042), Reply(text="YES", cost="free"))
    model = OpenAIChatModel(
        base_url=fresh_upstream.base_url,
        api_key="sk-test",
        model="m",
        max_tokens=16,
        timeout_s=2,
        max_retries=0,
    )
    try:
        turns = [[item async for item in model.stream([{"role": "user", "content": "?"}], [])] for _ in "ab"]
    finally:
        await model.aclose()

    ends = [turn[-1] for turn in turns]
    assert all(isinstance(end, TurnEnd) for end in ends)
    assert [end.cost for end in ends if isinstance(end, TurnEnd)] == [0.00042, None]
    assert [item.text for item in turns[1] if isinstance(item, TextDelta)] == ["YES"], "the answer is intact"


async def test_the_verdicts_cached_before_the_ledger_are_counted(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = await Database.open(path)
    # The database as migration 0009_judge_calls finds it: judgements, and no ledger yet.
    await db.execute("DROP TABLE judge_calls")
    await db.execute("DELETE FROM schema_migrations WHERE name = '0009_judge_calls'")
    await db.execute(
        "INSERT INTO judgements VALUES ('acme', 1, 'e', 'q', 1, 'same', 'judge-model', 70, 2, "
        "'2026-01-02T00:00:00+00:00')"
    )
    await db.close()

    db = await Database.open(path)
    try:
        totals = await SqlJudgementStore(db).totals("acme")
    finally:
        await db.close()
    assert (totals.calls, totals.failed, totals.prompt_tokens, totals.completion_tokens) == (1, 0, 70, 2)
    assert totals.unpriced_calls == 1


# -- the setting ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "key", "on"),
    [
        ("auto", "sk-x", True),
        ("auto", "", False),
        ("on", "sk-x", True),
        ("on", "", False),
        ("off", "sk-x", False),
        ("off", "", False),
    ],
)
def test_one_rule_decides(mode: str, key: str, on: bool) -> None:
    settings = Settings(_env_file=None, memory_judge=mode, llm_api_key=key)  # type: ignore[call-arg]
    assert judge_switch(settings).on is on


@pytest.mark.parametrize(("old", "mode"), [("true", "on"), ("false", "off"), ("1", "on"), ("no", "off")])
def test_the_deprecated_switch_still_reads_with_a_warning(
    old: str, mode: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("MEMORY_JUDGE", raising=False)
    monkeypatch.setenv("MEMORY_JUDGE_ENABLED", old)
    with pytest.warns(DeprecationWarning, match="MEMORY_JUDGE_ENABLED is deprecated: set MEMORY_JUDGE=on"):
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.memory_judge == mode

    # In a `.env` file too, and the new name wins over the old one.
    monkeypatch.delenv("MEMORY_JUDGE_ENABLED")
    env_file = tmp_path / ".env"
    env_file.write_text(f"MEMORY_JUDGE_ENABLED={old}\nMEMORY_JUDGE=auto\n", "utf-8")
    with pytest.warns(DeprecationWarning, match="MEMORY_JUDGE_ENABLED"):
        assert Settings(_env_file=env_file).memory_judge == "auto"  # type: ignore[call-arg]


def test_the_default_is_auto_and_a_bad_value_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_JUDGE", raising=False)
    monkeypatch.delenv("MEMORY_JUDGE_ENABLED", raising=False)
    assert Settings(_env_file=None).memory_judge == "auto"  # type: ignore[call-arg]
    monkeypatch.setenv("MEMORY_JUDGE", "sometimes")
    with pytest.raises(ValueError, match="'auto', 'on' or 'off'"):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_the_test_settings_keep_the_judge_off_unless_asked(tmp_path: Path, upstream: FakeUpstream) -> None:
    # The tests' upstream key would turn `auto` on: a test meets the judge only when it asks.
    assert make_settings(tmp_path, upstream).memory_judge == "off"
    assert make_settings(tmp_path, upstream, memory_judge_enabled=True).memory_judge == "on"


@pytest.mark.parametrize(
    ("overrides", "level", "said"),
    [
        (
            {"memory_judge": "auto"},
            logging.INFO,
            "the LLM judge is on: MEMORY_JUDGE=auto and an LLM upstream is configured (LLM_API_KEY is set)",
        ),
        (
            {"memory_judge": "on", "llm_api_key": "", "llm_base_url": OPENROUTER_URL},
            logging.WARNING,
            "the LLM judge is off: MEMORY_JUDGE=on and no LLM upstream is configured (LLM_API_KEY is empty)",
        ),
    ],
    ids=["auto-on", "on-without-upstream"],
)
async def test_the_start_up_log_says_whether_the_judge_is_on_and_why(
    overrides: dict[str, Any],
    level: int,
    said: str,
    tmp_path: Path,
    upstream: FakeUpstream,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="memory_guard")
    services = await Services.open(make_settings(tmp_path, upstream, **overrides))
    await services.aclose()

    assert [(r.levelno, r.getMessage()) for r in caplog.records if "LLM judge is" in r.getMessage()] == [
        (level, said)
    ]
