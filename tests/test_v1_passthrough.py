"""The OpenAI-compatible endpoint with the client's own tools, which pass through to the upstream
(never answered from memory nor learned), and with the upstream failing (an HTTP error, a cut
stream, a hang), which the `openai` client receives as a clean error, nothing learned."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.server import LiveApp
from tests.upstream import FakeUpstream, Reply, ToolCall

QUESTION = "Quel temps fait-il à Paris ?"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "the weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@pytest.fixture
def client(live: LiveApp) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{live.base_url}/v1", api_key="ka", max_retries=0) as found:
        yield found


def ask(text: str = QUESTION) -> list[Any]:
    return [{"role": "user", "content": text}]


def decision(client: openai.OpenAI, text: str) -> str:
    raw = client.chat.completions.with_raw_response.create(model="m", messages=ask(text))
    return raw.headers["x-memory-guard-decision"]


def test_a_client_tool_call_comes_back_to_the_sdk_and_nothing_is_learned(
    client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(tool_calls=[ToolCall("get_weather", {"city": "Paris"}, id="call_1")]))
    raw = client.chat.completions.with_raw_response.create(model="m", messages=ask(), tools=[WEATHER])
    assert raw.headers["x-memory-guard-decision"] == "miss"
    choice = raw.parse().choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert (call.id, call.function.name, call.function.arguments) == (
        "call_1",
        "get_weather",
        '{"city": "Paris"}',
    )
    # The client's conversation and tools went as they were, without the gateway's prompt or skills.
    sent = fresh_upstream.requests[-1].body
    assert sent["messages"] == ask() and sent["tools"] == [WEATHER]

    # The client runs its tool and sends the result: that passes through as well.
    fresh_upstream.push(Reply(text="Il fait 21 °C à Paris."))
    conversation = [
        *ask(),
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump(exclude_none=True)]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature": 21}'},
    ]
    raw = client.chat.completions.with_raw_response.create(model="m", messages=conversation, tools=[WEATHER])
    assert raw.headers["x-memory-guard-decision"] == "miss"
    assert raw.parse().choices[0].message.content == "Il fait 21 °C à Paris."
    assert fresh_upstream.requests[-1].body["messages"][-1]["tool_call_id"] == "call_1"

    # Neither answer was learned: the question asked without tools goes to the upstream.
    fresh_upstream.push(Reply(text="Je ne sais pas."))
    assert decision(client, QUESTION) == "miss"
    assert fresh_upstream.calls == 3


def test_a_passthrough_is_never_answered_from_memory(
    client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(Reply(text="Beau temps."))
    assert decision(client, QUESTION) == "miss"
    assert decision(client, QUESTION) == "direct"  # learned
    fresh_upstream.push(Reply(tool_calls=[ToolCall("get_weather", {"city": "Paris"})]))
    raw = client.chat.completions.with_raw_response.create(model="m", messages=ask(), tools=[WEATHER])
    assert raw.headers["x-memory-guard-decision"] == "miss"
    assert raw.parse().choices[0].message.tool_calls
    assert fresh_upstream.calls == 2


def test_streamed_tool_calls_reach_the_sdk_in_openai_shape(
    client: openai.OpenAI, fresh_upstream: FakeUpstream
) -> None:
    fresh_upstream.push(
        Reply(
            text="Je regarde.",
            tool_calls=[
                ToolCall("get_weather", {"city": "Paris"}, id="c1"),
                ToolCall("get_weather", id="c2"),
            ],
        )
    )
    chunks = list(client.chat.completions.create(model="m", messages=ask(), tools=[WEATHER], stream=True))
    calls = [call for c in chunks if c.choices for call in c.choices[0].delta.tool_calls or ()]
    assert [(c.index, c.id, c.function.name) for c in calls] == [
        (0, "c1", "get_weather"),
        (1, "c2", "get_weather"),
    ]
    assert calls[0].function.arguments == '{"city": "Paris"}'
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Je regarde."
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


FAILURES = {
    "http_500": Reply(status=500),
    "cut_stream": Reply(text="Un début de réponse qui sera coupé", cut_after_chunks=2),
    "hang": Reply(hang=True),
}


@pytest.mark.parametrize("failure", FAILURES, ids=list(FAILURES))
def test_an_upstream_failure_is_a_clean_error_and_nothing_is_learned(
    client: openai.OpenAI, fresh_upstream: FakeUpstream, failure: str
) -> None:
    fresh_upstream.push(FAILURES[failure])
    with pytest.raises(openai.InternalServerError) as raised:
        client.chat.completions.create(model="m", messages=ask())
    expected = (504, "upstream_timeout") if failure == "hang" else (502, "upstream_error")
    assert (raised.value.status_code, raised.value.code) == expected
    assert raised.value.body["type"] == "api_error"  # type: ignore[index]
    fresh_upstream.release()
    _nothing_learned(client, fresh_upstream)


@pytest.mark.parametrize("failure", FAILURES, ids=list(FAILURES))
def test_an_upstream_failure_mid_stream_is_an_error_the_sdk_raises(
    client: openai.OpenAI, fresh_upstream: FakeUpstream, failure: str
) -> None:
    fresh_upstream.push(FAILURES[failure])
    stream = client.chat.completions.create(model="m", messages=ask(), stream=True)
    with pytest.raises(openai.APIError) as raised:
        list(stream)
    expected = "upstream_timeout" if failure == "hang" else "upstream_error"
    assert raised.value.code == expected
    assert "fake upstream error" not in raised.value.message  # the upstream's own text stays in the log
    fresh_upstream.release()
    _nothing_learned(client, fresh_upstream)


def test_a_passthrough_failure_is_a_clean_error(client: openai.OpenAI, fresh_upstream: FakeUpstream) -> None:
    fresh_upstream.push(Reply(status=500), Reply(status=500))
    with pytest.raises(openai.InternalServerError) as raised:
        client.chat.completions.create(model="m", messages=ask(), tools=[WEATHER])
    assert raised.value.code == "upstream_error"
    with pytest.raises(openai.APIError):
        list(client.chat.completions.create(model="m", messages=ask(), tools=[WEATHER], stream=True))


def _nothing_learned(client: openai.OpenAI, upstream: FakeUpstream) -> None:
    calls = upstream.calls
    upstream.push(Reply(text="Beau temps."))
    assert decision(client, QUESTION) == "miss"
    assert upstream.calls == calls + 1
