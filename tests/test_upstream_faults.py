"""A hostile or broken upstream against the live app: every run ends, once, without leaking a key.

The fake upstream (tests/upstream.py) speaks the real OpenAI streaming protocol over HTTP and the app
talks to it with the official `openai` client. The deadlines are set small here; the tests assert that
each stream ends with exactly one `error` of the right code (or one `done` where the run is meant to
go on), never how long it took.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import openai
import pytest

from memory_guard.core.errors import UpstreamError, UpstreamTimeout
from memory_guard.embeddings.openai import OpenAIEmbedder
from memory_guard.settings import OPENROUTER_URL
from memory_guard.upstream.redaction import Redactor
from tests.conftest import client_for
from tests.server import ChatReply, LiveApp, parse_sse
from tests.test_judge import NEAR, clients, unsure_app
from tests.upstream import FakeUpstream, RecordedRequest, Reply, ToolCall

QUESTION = "Quelle est la durée de la garantie de parfait achèvement ?"
KEY = "sk-proj-H2faultsSECRET0123456789abcdef"
# Only a guard against a test that would hang: a stream still open after this long has no end.
HANG_GUARD_S = 30
EMBEDDING_KEY = "emb-H2faultsSECRET-9876"

# The per-read timeout is far above the deadlines: only the deadlines can end these runs.
FAULTY = {
    "llm_api_key": KEY,
    "embedding_api_key": EMBEDDING_KEY,
    "llm_timeout_s": 30.0,
    "llm_turn_deadline_s": 2.0,
    "llm_run_deadline_s": 4.0,
}


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO)
    return caplog


@pytest.fixture
def faulty(app_factory: Callable[..., LiveApp]) -> LiveApp:
    return app_factory(**FAULTY)


@pytest.fixture
def acme(faulty: LiveApp) -> Iterator[httpx.Client]:
    with client_for(faulty, "ka") as client:
        yield client


@pytest.fixture
def acme_staff(faulty: LiveApp) -> Iterator[httpx.Client]:
    with client_for(faulty, "sa") as client:
        yield client


def chat(client: httpx.Client, **body: object) -> ChatReply:
    """POST /chat and read the SSE stream to its end, failing (not hanging) on one without end."""
    given_up = time.monotonic() + HANG_GUARD_S
    lines: list[str] = []
    with client.stream("POST", "/chat", json=body) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            lines.append(line.rstrip("\r"))
            if time.monotonic() > given_up:
                pytest.fail(f"the stream did not end; it sent {len(lines)} lines")
    return ChatReply(response.status_code, parse_sse(lines))


def only_error(reply: ChatReply) -> dict[str, str]:
    """The run's one terminal event, which must be an `error`."""
    assert reply.status == 200
    assert [k for k in reply.kinds if k in ("done", "error")] == ["error"], reply.kinds
    assert reply.kinds[-1] == "error"
    return reply.of("error")[0]


def learned_nothing(staff: httpx.Client) -> None:
    assert staff.get("/staff/memory").json()["items"] == []


def left(request: RecordedRequest) -> bool:
    """Whether the app closed this upstream request (polled: the fake sees it a moment later)."""
    deadline = time.monotonic() + 5
    while not request.disconnected and time.monotonic() < deadline:
        time.sleep(0.02)
    return request.disconnected


def no_secret_in(*texts: str) -> None:
    for text in texts:
        assert KEY not in text
        assert EMBEDDING_KEY not in text
        assert "H2faultsSECRET" not in text


# -- deadlines ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [Reply(keepalive=True), Reply(text="encore ", endless=True)],
    ids=["keep-alive-comments-forever", "text-without-end"],
)
def test_an_upstream_that_never_finishes_ends_the_run_with_upstream_timeout(
    acme: httpx.Client, acme_staff: httpx.Client, fresh_upstream: FakeUpstream, reply: Reply
) -> None:
    fresh_upstream.push(reply)

    failed = chat(acme, message=QUESTION)

    assert only_error(failed)["code"] == "upstream_timeout"
    assert left(fresh_upstream.requests[0]), "the upstream request must be closed"
    assert not fresh_upstream.requests[0].completed
    learned_nothing(acme_staff)
    fresh_upstream.push(Reply(text="Un an."))
    assert chat(acme, message=QUESTION).done["learned_entry_id"] is not None, "the service goes on"


def test_a_hang_before_headers_is_cut_by_the_turn_deadline_retries_included(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(**FAULTY, llm_max_retries=2)
    fresh_upstream.push(*[Reply(hang_before_headers=True)] * 3)

    with client_for(live, "ka") as acme:
        failed = chat(acme, message=QUESTION)

    assert only_error(failed)["code"] == "upstream_timeout"
    # The first attempt used the whole turn: no retry may start after the deadline.
    assert fresh_upstream.calls == 1
    assert left(fresh_upstream.requests[0])


def test_a_retry_that_would_end_past_the_deadline_never_starts(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(**FAULTY, llm_max_retries=2)
    fresh_upstream.push(Reply(status=503, headers={"retry-after": "20"}), Reply(text="trop tard"))

    with client_for(live, "ka") as acme:
        failed = chat(acme, message=QUESTION)

    error = only_error(failed)
    assert error["code"] == "upstream_error"
    assert "503" in error["message"]
    assert fresh_upstream.calls == 1


def test_retries_within_the_deadline_still_happen(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(**{**FAULTY, "llm_turn_deadline_s": 10.0}, llm_max_retries=1)
    fresh_upstream.push(Reply(status=503, headers={"retry-after": "0.05"}), Reply(text="Un an."))

    with client_for(live, "ka") as acme:
        reply = chat(acme, message=QUESTION)

    assert reply.text == "Un an."
    assert fresh_upstream.calls == 2


def test_the_run_deadline_bounds_the_turns_together(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    # Each turn alone would be allowed a minute; the run as a whole is not.
    live = app_factory(**{**FAULTY, "llm_turn_deadline_s": 60.0, "llm_run_deadline_s": 2.0})
    fresh_upstream.push(
        Reply(tool_calls=[ToolCall("search_memory", {"query": "garantie"})]), Reply(keepalive=True)
    )

    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        failed = chat(acme, message=QUESTION)
        assert only_error(failed)["code"] == "upstream_timeout"
        assert "skill_result" in failed.kinds
        assert left(fresh_upstream.requests[1])
        learned_nothing(staff)


def test_an_answer_past_the_cap_is_cut_and_not_learned(
    app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream
) -> None:
    live = app_factory(**{**FAULTY, "llm_turn_deadline_s": 30.0}, llm_max_answer_chars=60)
    fresh_upstream.push(Reply(text="encore ", endless=True))

    with client_for(live, "ka") as acme, client_for(live, "sa") as staff:
        reply = chat(acme, message=QUESTION)
        learned_nothing(staff)

    assert reply.kinds.count("done") == 1 and "error" not in reply.kinds
    assert reply.done["learned_entry_id"] is None
    assert len(reply.text) == 60
    assert any("tronquée" in s["content"] for s in reply.of("status"))
    assert left(fresh_upstream.requests[0])


# -- what reaches the client and the log ----------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (Reply(status=401, echo_key=True), "401"),
        (Reply(status=403, error_message=f"key {KEY} may not use this model"), "403"),
        (Reply(status=429, error_message=f"slow down, Bearer {KEY}"), "429"),
        (Reply(status=500, error_message=f"crashed while checking {KEY}"), "500"),
        (Reply(status=400, error_message=f"bad request from sk-other-{KEY[-12:]}"), "400"),
    ],
    ids=["401-echoes-the-key", "403", "429", "500", "400"],
)
def test_the_upstreams_error_text_reaches_neither_client_nor_log(
    acme: httpx.Client,
    acme_staff: httpx.Client,
    fresh_upstream: FakeUpstream,
    logs: pytest.LogCaptureFixture,
    reply: Reply,
    status: str,
) -> None:
    fresh_upstream.push(reply)

    failed = chat(acme, message=QUESTION)

    error = only_error(failed)
    assert error["code"] == "upstream_error"
    assert status in error["message"]
    assert fresh_upstream.requests[0].headers["authorization"] == f"Bearer {KEY}"
    no_secret_in(str(failed.events), logs.text)
    assert "[redacted]" in logs.text, "the upstream's text is logged, without its secrets"
    learned_nothing(acme_staff)


def test_an_empty_llm_key_says_so(app_factory: Callable[..., LiveApp], fresh_upstream: FakeUpstream) -> None:
    live = app_factory(llm_api_key="", llm_base_url=OPENROUTER_URL)

    with client_for(live, "ka") as acme:
        failed = chat(acme, message=QUESTION)

    error = only_error(failed)
    assert error["code"] == "llm_not_configured"
    assert "LLM_API_KEY" in error["message"]
    assert fresh_upstream.calls == 0


@pytest.mark.parametrize(
    "raw",
    [
        f'{{"choices": [{{"index": 0, "delta": {{"content": "{KEY}',
        '{"choices": [{"index": 0, "delta": null, "finish_reason": null}]}',
        '{"choices": [{"index": 0, "delta": {"content": 42}, "finish_reason": null}]}',
        f'{{"choices": "{KEY}"}}',
        "[1, 2, 3]",
    ],
    ids=["not-json", "null-delta", "number-content", "choices-not-a-list", "not-an-object"],
)
def test_a_malformed_chunk_is_an_upstream_error(
    acme: httpx.Client,
    acme_staff: httpx.Client,
    fresh_upstream: FakeUpstream,
    logs: pytest.LogCaptureFixture,
    raw: str,
) -> None:
    fresh_upstream.push(Reply(text="Un an.", raw_data=raw))

    failed = chat(acme, message=QUESTION)

    error = only_error(failed)
    assert error["code"] == "upstream_error"
    assert "malformed" in error["message"]
    assert "Traceback" not in logs.text
    no_secret_in(str(failed.events), logs.text)
    learned_nothing(acme_staff)


def test_an_error_sent_in_place_of_a_chunk_is_an_upstream_error(
    acme: httpx.Client, fresh_upstream: FakeUpstream, logs: pytest.LogCaptureFixture
) -> None:
    # OpenRouter reports a failure that happens mid-answer this way.
    raw = f'{{"error": {{"message": "provider overloaded for Bearer {KEY}", "code": 502}}}}'
    fresh_upstream.push(Reply(text="Un an.", raw_data=raw))

    error = only_error(chat(acme, message=QUESTION))

    assert error["code"] == "upstream_error"
    assert error["message"] == "the LLM upstream failed: it reported an error mid-answer"
    no_secret_in(logs.text)
    assert "provider overloaded for Bearer [redacted]" in logs.text


# -- the judge and the embeddings endpoint ---------------------------------------------------------


@pytest.mark.parametrize(
    "judge_reply",
    [Reply(keepalive=True), Reply(text="YES ", endless=True), Reply(status=401, echo_key=True)],
    ids=["keep-alive-forever", "text-without-end", "401-echoes-the-key"],
)
def test_a_failing_judge_leaves_the_candidate_unsure_and_the_llm_answers(
    tmp_path: Path, fresh_upstream: FakeUpstream, logs: pytest.LogCaptureFixture, judge_reply: Reply
) -> None:
    fresh_upstream.push(judge_reply, Reply(text="Un an."))
    settings = {
        **FAULTY,
        "llm_turn_deadline_s": 30.0,
        "memory_judge_enabled": True,
        "memory_judge_timeout_s": 1.0,
    }
    with unsure_app(tmp_path, fresh_upstream, **settings) as url, clients(url) as (client, _):
        reply = chat(client, message=NEAR)

    assert reply.done["decision"] == "assisted"
    assert reply.text == "Un an."
    assert [r.body["model"] for r in fresh_upstream.requests] == ["judge-model", "test-model"]
    judged = fresh_upstream.requests[0]
    assert judged.completed or left(judged)
    no_secret_in(str(reply.events), logs.text)


async def test_the_embeddings_endpoint_has_a_total_deadline(fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push_embeddings(Reply(keepalive=True))
    embedder = OpenAIEmbedder(
        base_url=fresh_upstream.base_url, api_key=EMBEDDING_KEY, model="m", timeout_s=30, deadline_s=0.5
    )
    try:
        with pytest.raises(UpstreamTimeout):
            await embedder.embed(["une question"])
        assert (await embedder.embed(["une question"])).shape == (1, 8), "the next call works"
    finally:
        await embedder.aclose()


async def test_the_embeddings_endpoints_error_text_is_not_repeated(
    fresh_upstream: FakeUpstream, logs: pytest.LogCaptureFixture
) -> None:
    fresh_upstream.push_embeddings(Reply(status=401, echo_key=True))
    embedder = OpenAIEmbedder(base_url=fresh_upstream.base_url, api_key=EMBEDDING_KEY, model="m")
    try:
        with pytest.raises(UpstreamError) as caught:
            await embedder.embed(["une question"])
    finally:
        await embedder.aclose()
    assert "401" in caught.value.message
    no_secret_in(caught.value.message, logs.text)
    assert "[redacted]" in logs.text


# -- the fault modes themselves, seen by the official client ---------------------------------------


async def test_the_fault_modes_are_what_a_real_client_meets(fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(status=401, echo_key=True), Reply(text="x", raw_data="{not json"))
    async with openai.AsyncOpenAI(base_url=fresh_upstream.base_url, api_key=KEY, max_retries=0) as client:
        with pytest.raises(openai.AuthenticationError) as refused:
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
        assert KEY in refused.value.message, "the 401 quotes the key, as OpenAI's does"
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "q"}], stream=True
        )
        async with stream:
            await stream.__anext__()  # the role chunk
            with pytest.raises(json.JSONDecodeError):
                await stream.__anext__()


def test_the_redactor_replaces_keys_configured_or_key_shaped() -> None:
    redact = Redactor([KEY, EMBEDDING_KEY, "ab", ""])

    assert redact(f"provided: {KEY}.") == "provided: [redacted]."
    assert redact(f"x-api-key={EMBEDDING_KEY}") == "x-api-key=[redacted]"
    assert redact("provided: sk-proj-********************abcd.") == "provided: [redacted]."
    assert redact("Authorization: Bearer eyJhbGciOi.J9x-y_z") == "Authorization: [redacted]"
    assert redact("a table, a cab") == "a table, a cab", "secrets this short are left alone"
    assert redact(f"{'x' * 10}{KEY}", limit=12) == "xxxxxxxxxx[…", "cut after redacting, never through a key"
