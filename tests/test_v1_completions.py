"""The OpenAI-compatible endpoint driven by the official `openai` client, unmodified, against the
real server and the fake-but-real upstream: answers streamed and not, sync and async, from memory on
the second asking, the decision headers, cache control, scopes and the SDK's own exceptions."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.server import LiveApp
from tests.upstream import FakeUpstream, Reply

QUESTION = "Quelle est la durée de la garantie de parfait achèvement ?"
ANSWER = "Un an à compter de la réception des travaux."


def ask(text: str = QUESTION) -> list[Any]:
    return [{"role": "user", "content": text}]


def sdk(live: LiveApp, key: str = "ka") -> openai.OpenAI:
    # No retries: a retried request would call the upstream again and hide what one request does.
    return openai.OpenAI(base_url=f"{live.base_url}/v1", api_key=key, max_retries=0)


@pytest.fixture
def client(live: LiveApp) -> Iterator[openai.OpenAI]:
    with sdk(live) as found:
        yield found


def complete(client: openai.OpenAI, text: str = QUESTION, **options: Any) -> tuple[str, dict[str, str], Any]:
    """One non-streamed answer: its decision header, all its headers and the parsed completion."""
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=ask(text), **options)
    return raw.headers["x-memory-guard-decision"], dict(raw.headers), raw.parse()


def stream(client: openai.OpenAI, text: str = QUESTION, **options: Any) -> tuple[dict[str, str], list[Any]]:
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=ask(text), stream=True, **options
    )
    return dict(raw.headers), list(raw.parse())


def text_of(chunks: list[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def test_a_miss_is_answered_by_the_upstream_then_the_second_asking_from_memory(
    client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER, usage=(120, 12)))
    decision, headers, first = complete(client)
    assert decision == "miss" and "x-memory-guard-entry-id" not in headers
    assert first.choices[0].message.content == ANSWER
    assert first.choices[0].finish_reason == "stop"
    assert first.model == "gpt-4o-mini"  # the model the request named
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (120, 12)

    decision, headers, second = complete(client)
    assert decision == "direct"
    assert int(headers["x-memory-guard-entry-id"]) >= 1
    assert float(headers["x-memory-guard-score"]) == 1.0
    assert second.object == "chat.completion" and second.model == "gpt-4o-mini"
    assert second.choices[0].message.content == ANSWER
    assert second.choices[0].finish_reason == "stop"
    usage = second.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (0, 0, 0)
    assert fresh_upstream.calls == 1  # the second answer cost no upstream call


def test_streamed_answers_end_with_stop_and_the_second_comes_from_memory(
    client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER))
    headers, chunks = stream(client, stream_options={"include_usage": True})
    assert headers["x-memory-guard-decision"] == "miss"
    assert headers["content-type"].startswith("text/event-stream")
    assert text_of(chunks) == ANSWER
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0

    headers, chunks = stream(client)
    assert headers["x-memory-guard-decision"] == "direct"
    assert "x-memory-guard-entry-id" in headers and "x-memory-guard-score" in headers
    assert text_of(chunks) == ANSWER
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.model == "gpt-4o-mini" for c in chunks)
    assert fresh_upstream.calls == 1


async def test_the_async_client_streams_and_gets_the_second_asking_from_memory(
    live: LiveApp, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER))
    async with openai.AsyncOpenAI(base_url=f"{live.base_url}/v1", api_key="ka", max_retries=0) as client:
        raw = await client.chat.completions.with_raw_response.create(model="m", messages=ask(), stream=True)
        assert raw.headers["x-memory-guard-decision"] == "miss"
        pieces = [chunk async for chunk in raw.parse()]
        assert text_of(pieces) == ANSWER

        raw = await client.chat.completions.with_raw_response.create(model="m", messages=ask())
        assert raw.headers["x-memory-guard-decision"] == "direct"
        assert raw.parse().choices[0].message.content == ANSWER
    assert fresh_upstream.calls == 1


def test_the_decision_headers_come_before_the_llm_has_answered(
    client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    """The guard decides before the LLM runs: a streamed answer's headers are out while the
    upstream still holds its reply."""
    fresh_upstream.push(Reply(text=ANSWER, hang_before_headers=True))
    raw = client.chat.completions.with_raw_response.create(model="m", messages=ask(), stream=True)
    assert raw.headers["x-memory-guard-decision"] == "miss"
    assert not any(r.completed for r in fresh_upstream.requests)  # held until released
    while not fresh_upstream.requests:  # released once it holds the request, not before
        time.sleep(0.01)
    fresh_upstream.release()
    assert text_of(list(raw.parse())) == ANSWER


def test_no_store_answers_from_memory_and_learns_nothing(
    client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER), Reply(text=ANSWER))
    assert complete(client, extra_headers={"Cache-Control": "no-store"})[0] == "miss"
    # Nothing learned: the same question goes to the upstream again, the body field saying no-store.
    assert complete(client, metadata={"cache": "no-store"})[0] == "miss"
    assert fresh_upstream.calls == 2
    # The third asking learns it; no-store may still be answered from memory.
    fresh_upstream.push(Reply(text=ANSWER))
    complete(client)
    assert complete(client, extra_headers={"Cache-Control": "no-store"})[0] == "direct"
    assert fresh_upstream.calls == 3


def test_no_exchange_is_kept_as_a_conversation(
    live: LiveApp, client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    """The client holds the conversation: neither a miss nor a direct answer, stored or not,
    leaves its question or answer in the tenant's conversations."""
    fresh_upstream.push(Reply(text=ANSWER), Reply(text=ANSWER))
    assert complete(client, extra_headers={"Cache-Control": "no-store"})[0] == "miss"
    assert complete(client)[0] == "miss"
    assert complete(client)[0] == "direct"
    # A staff read waits for the bookkeeping queued after the direct answer (api/freshness.py).
    httpx.get(
        f"{live.base_url}/staff/memory/stats", headers={"Authorization": "Bearer sa"}
    ).raise_for_status()
    with sqlite3.connect(live.settings.memory_db_path) as db:
        assert db.execute("SELECT count(*) FROM messages").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM conversations").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM responses").fetchone() == (1,)


def test_no_cache_skips_the_lookup_and_its_answer_replaces_the_learned_one(
    client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER))
    complete(client)
    fresh_upstream.push(Reply(text="Un an, garantie de parfait achèvement."))
    decision, _, fresh = complete(client, extra_headers={"Cache-Control": "no-cache"})
    assert decision == "miss" and fresh.choices[0].message.content.startswith("Un an, garantie")
    assert fresh_upstream.calls == 2
    # Both at once: neither lookup nor learning.
    fresh_upstream.push(Reply(text="autre"))
    assert complete(client, metadata={"cache": "no-cache, no-store"})[0] == "miss"
    decision, _, served = complete(client)
    assert decision == "direct" and served.choices[0].message.content.startswith("Un an, garantie")


def test_scopes_and_tenants_keep_their_memories_apart(
    live: LiveApp, client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER))
    assert complete(client, extra_headers={"X-Memory-Guard-Project": "tour-a"})[0] == "miss"
    # The same project named in the body's metadata is the same scope.
    assert complete(client, metadata={"project": "tour-a"})[0] == "direct"
    fresh_upstream.push(Reply(text="autre projet"), Reply(text="autre client"))
    assert complete(client, extra_headers={"X-Memory-Guard-Project": "tour-b"})[0] == "miss"
    with sdk(live, "kb") as globex:  # tenant globex: never acme's entry
        decision, _, answer = complete(globex, extra_headers={"X-Memory-Guard-Project": "tour-a"})
    assert decision == "miss" and answer.choices[0].message.content == "autre client"


def test_a_request_may_not_name_its_tenant(client: openai.OpenAI, fresh_upstream: FakeUpstream) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        complete(client, metadata={"tenant": "globex"})
    assert raised.value.code == "tenant_not_allowed"
    assert raised.value.body["type"] == "invalid_request_error"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError):
        complete(client, extra_headers={"X-Memory-Guard-Tenant": "globex"})
    assert fresh_upstream.calls == 0


def test_an_unknown_key_raises_the_sdks_authentication_error(live: LiveApp) -> None:
    with sdk(live, "not-a-key") as stranger, pytest.raises(openai.AuthenticationError) as raised:
        stranger.chat.completions.create(model="m", messages=ask())
    assert raised.value.status_code == 401
    assert raised.value.body == {  # OpenAI's error shape
        "message": "unknown API key",
        "type": "authentication_error",
        "code": "invalid_key",
        "param": None,
    }
    with sdk(live, "not-a-key") as stranger, pytest.raises(openai.AuthenticationError):
        stranger.models.list()


@pytest.mark.parametrize(
    ("messages", "options", "code"),
    [
        ([{"role": "assistant", "content": "Bonjour"}], {}, "no_question"),
        ([{"role": "user", "content": "   "}], {}, "empty_message"),
        ([], {}, "invalid_request"),
        ([{"role": "user", "content": QUESTION}], {"metadata": {"cache": "max-age=0"}}, "invalid_cache"),
        (
            [{"role": "user", "content": QUESTION}],
            {"metadata": {"project": "a"}, "extra_headers": {"X-Memory-Guard-Project": "b"}},
            "conflicting_scope",
        ),
    ],
)
def test_a_bad_request_raises_the_sdks_bad_request_error(
    client: openai.OpenAI,
    fresh_upstream: FakeUpstream,
    messages: list[Any],
    options: dict[str, Any],
    code: str,
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model="m", messages=messages, **options)
    assert raised.value.code == code
    assert fresh_upstream.calls == 0


def test_the_rest_of_the_api_keeps_its_own_error_body(live: LiveApp) -> None:
    with httpx.Client(base_url=live.base_url) as plain:
        assert plain.post("/chat", json={"message": "x"}).json()["error"] == {
            "code": "missing_key",
            "message": "missing Authorization: Bearer <key> header",
        }
        v1 = plain.post("/v1/chat/completions", json={"model": "m", "messages": ask()}).json()
    assert v1["error"]["type"] == "authentication_error" and v1["error"]["code"] == "missing_key"


def test_an_oversized_body_is_refused_in_openai_shape(live: LiveApp) -> None:
    too_big = live.settings.max_body_bytes + 1
    with sdk(live) as client, pytest.raises(openai.APIStatusError) as raised:
        client.chat.completions.create(model="m", messages=ask("x" * too_big))
    assert raised.value.status_code == 413
    assert raised.value.body == {
        "message": f"request bodies are limited to {live.settings.max_body_bytes} bytes",
        "type": "invalid_request_error",
        "code": "payload_too_large",
        "param": None,
    }


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": "\ud800"}]}]},
            "invalid_request",
        ),
        ({"messages": ask(), "metadata": {"phase": "\ud800"}}, "invalid_scope"),
    ],
)
def test_text_that_is_not_valid_unicode_is_refused(live: LiveApp, body: dict[str, Any], code: str) -> None:
    """A lone surrogate (which the SDK cannot even send) is refused, never stored."""
    headers = {"Authorization": "Bearer ka", "Content-Type": "application/json"}
    with httpx.Client(base_url=live.base_url, headers=headers) as plain:
        # json.dumps escapes the lone surrogate as JSON allows: "\ud800".
        answer = plain.post("/v1/chat/completions", content=json.dumps({"model": "m", **body}))
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, code)


def test_models_lists_the_configured_model(client: openai.OpenAI) -> None:
    assert [model.id for model in client.models.list()] == ["test-model"]


def test_earlier_messages_are_the_history_and_a_follow_up_is_not_answered_direct(
    client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text=ANSWER))
    complete(client)
    conversation = [
        {"role": "system", "content": "Réponds en pirate."},
        {"role": "user", "content": "Parlons des garanties."},
        {"role": "assistant", "content": "Volontiers."},
        {"role": "user", "content": "et pour la décennale ?"},
    ]
    fresh_upstream.push(Reply(text="Dix ans."))
    raw = client.chat.completions.with_raw_response.create(model="m", messages=conversation)
    assert raw.headers["x-memory-guard-decision"] != "direct"
    sent = fresh_upstream.requests[-1].body["messages"]
    said = [(m["role"], m["content"]) for m in sent if m["role"] != "system"]
    assert said == [
        ("user", "Parlons des garanties."),
        ("assistant", "Volontiers."),
        ("user", "et pour la décennale ?"),
    ]
    # The client's own system prompt is not sent: the agent's profile is the prompt.
    assert all("pirate" not in m["content"] for m in sent)
