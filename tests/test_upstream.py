"""Self-tests of the fake upstream, driven by the real ``openai.AsyncOpenAI`` client over HTTP."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
import pytest
from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletionChunk

from tests.upstream import FakeUpstream, Reply, ToolCall

MESSAGES: list[Any] = [{"role": "user", "content": "hello there"}]


@pytest.fixture(scope="module")
def _server() -> Iterator[FakeUpstream]:
    with FakeUpstream() as up:
        yield up


@pytest.fixture
def upstream(_server: FakeUpstream) -> FakeUpstream:
    _server.reset()
    return _server


@pytest.fixture
async def client(upstream: FakeUpstream) -> AsyncIterator[AsyncOpenAI]:
    headers = {"HTTP-Referer": "https://memory-guard.test", "X-Title": "memory-guard"}
    async with AsyncOpenAI(
        base_url=upstream.base_url, api_key="sk-test", default_headers=headers, max_retries=0, timeout=5.0
    ) as c:
        yield c


async def collect(client: AsyncOpenAI, **kw: Any) -> tuple[list[Any], str, dict[int, dict[str, str]]]:
    """Stream one completion; return (chunks, text, tool calls accumulated by index)."""
    stream = await client.chat.completions.create(
        model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}, **kw
    )
    chunks: list[Any] = []
    text = ""
    calls: dict[int, dict[str, str]] = {}
    async with stream:
        async for chunk in stream:
            chunks.append(chunk)
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for tc in choice.delta.tool_calls or []:
                    acc = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                    acc["id"] += tc.id or ""
                    acc["name"] += (tc.function and tc.function.name) or ""
                    acc["arguments"] += (tc.function and tc.function.arguments) or ""
    return chunks, text, calls


async def drain(stream: AsyncStream[ChatCompletionChunk], texts: list[str]) -> None:
    async with stream:
        async for chunk in stream:
            texts.append(chunk.choices[0].delta.content or "" if chunk.choices else "")


async def test_text_streams_in_chunks_with_usage(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    upstream.push(Reply(text="The quick brown fox jumps.", usage=(11, 7)))
    chunks, text, _ = await collect(client)
    assert text == "The quick brown fox jumps."
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) == 5
    assert chunks[0].object == "chat.completion.chunk"
    assert chunks[0].choices[0].delta.role == "assistant"
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finish == ["stop"]
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (11, 7)
    assert chunks[-1].usage.total_tokens == 18
    assert upstream.requests[0].completed


async def test_no_usage_chunk_without_include_usage(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    async with stream:
        chunks = [c async for c in stream]
    assert all(c.choices and c.usage is None for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "OK"  # default reply


async def test_tool_call_arrives_in_fragments(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    args = {"query": "weather in Paris", "limit": 3, "tags": ["a", "b"]}
    upstream.push(Reply(tool_calls=[ToolCall("search", args, id="call_1")]))
    chunks, text, calls = await collect(client, tools=[])
    fragments = [c for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    assert len(fragments) > 2
    first = fragments[0].choices[0].delta.tool_calls[0]
    assert (first.index, first.id, first.type, first.function.name) == (0, "call_1", "function", "search")
    assert all(f.choices[0].delta.tool_calls[0].id is None for f in fragments[1:])
    assert text == ""
    assert calls[0]["name"] == "search"
    assert json.loads(calls[0]["arguments"]) == args
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finish == ["tool_calls"]


async def test_two_tool_calls_in_one_turn(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    upstream.push(Reply(text="Let me look.", tool_calls=[ToolCall("a", {"x": 1}), ToolCall("b", {"y": "z"})]))
    _, text, calls = await collect(client)
    assert text == "Let me look."
    assert sorted(calls) == [0, 1]
    assert (calls[0]["name"], json.loads(calls[0]["arguments"])) == ("a", {"x": 1})
    assert (calls[1]["name"], json.loads(calls[1]["arguments"])) == ("b", {"y": "z"})
    assert calls[0]["id"].startswith("call_")
    assert calls[0]["id"] != calls[1]["id"]


async def test_finish_reason_length(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    upstream.push(Reply(text="truncated", finish_reason="length"))
    chunks, _, _ = await collect(client, max_tokens=3)
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"
    assert upstream.requests[0].body["max_tokens"] == 3


async def test_non_streaming(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    upstream.push(Reply(text="hi", tool_calls=[ToolCall("f", {"k": [1, 2]})]))
    res = await client.chat.completions.create(model="m", messages=MESSAGES)
    assert res.choices[0].message.content == "hi"
    assert res.choices[0].finish_reason == "tool_calls"
    calls = res.choices[0].message.tool_calls or []
    assert json.loads(calls[0].function.arguments) == {"k": [1, 2]}  # type: ignore[union-attr]
    assert res.usage is not None
    assert res.usage.total_tokens > 0


@pytest.mark.parametrize(
    ("status", "exc"),
    [(500, openai.InternalServerError), (429, openai.RateLimitError), (401, openai.AuthenticationError)],
)
async def test_error_status(
    upstream: FakeUpstream, client: AsyncOpenAI, status: int, exc: type[Exception]
) -> None:
    upstream.push(Reply(status=status, error_message="boom"))
    with pytest.raises(exc) as info:
        await collect(client)
    assert isinstance(info.value, openai.APIStatusError)
    assert info.value.status_code == status
    assert "boom" in info.value.message


async def test_delay_beyond_timeout_raises_api_timeout(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    upstream.push(Reply(delay_s=2.0))
    with pytest.raises(openai.APITimeoutError):
        await collect(client.with_options(timeout=0.3))


async def test_hang_after_headers_raises_api_timeout(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    """Headers arrive so create() returns; iterating then raises openai.APITimeoutError (read timeout)."""
    upstream.push(Reply(text="never", hang=True))
    stream = await client.with_options(timeout=0.3).chat.completions.create(
        model="m", messages=MESSAGES, stream=True
    )
    with pytest.raises(openai.APITimeoutError):
        await drain(stream, [])


async def test_hang_released_goes_on(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    upstream.push(Reply(text="later on", hang=True))
    stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    upstream.release()
    async with stream:
        assert "".join([c.choices[0].delta.content or "" async for c in stream if c.choices]) == "later on"


async def test_cut_stream_raises_api_connection_error(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    """An abrupt cut mid-stream (no [DONE], incomplete chunked body) surfaces, while iterating, as
    ``openai.APIConnectionError`` (not its subclass APITimeoutError), caused by
    ``httpx2.RemoteProtocolError`` ("incomplete chunked read"); the chunks before the cut are delivered."""
    upstream.push(Reply(text="one two three four five", cut_after_chunks=3))
    received: list[str] = []
    stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    with pytest.raises(openai.APIConnectionError) as info:
        await drain(stream, received)
    assert type(info.value) is openai.APIConnectionError
    assert type(info.value.__cause__).__name__ == "RemoteProtocolError"
    assert "".join(received) == "one two "
    assert not upstream.requests[0].completed


async def test_headers_and_calls_recorded(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    upstream.push(Reply(text="first"), Reply(text="second"))
    assert (await collect(client))[1] == "first"
    assert (await collect(client))[1] == "second"
    assert (await collect(client))[1] == "OK"
    assert upstream.calls == 3
    assert upstream.pending == 0
    rec = upstream.requests[0]
    assert rec.path == "/v1/chat/completions"
    assert rec.headers["http-referer"] == "https://memory-guard.test"
    assert rec.headers["x-title"] == "memory-guard"
    assert rec.headers["authorization"] == "Bearer sk-test"
    assert rec.body["messages"] == MESSAGES
    assert rec.body["stream_options"] == {"include_usage": True}
    upstream.reset()
    assert (upstream.calls, upstream.requests) == (0, [])


async def test_client_disconnect_mid_stream_is_seen(upstream: FakeUpstream, client: AsyncOpenAI) -> None:
    upstream.push(Reply(text="a b c d e f g h", chunk_delay_s=0.05))
    stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    async with stream:
        await stream.__anext__()
    for _ in range(100):
        if upstream.requests[0].disconnected:
            break
        await asyncio.sleep(0.01)
    assert upstream.requests[0].disconnected
    assert not upstream.requests[0].completed


async def test_stop_ends_a_hang_promptly() -> None:
    up = FakeUpstream().start()
    up.push(Reply(text="x", hang=True))
    async with AsyncOpenAI(base_url=up.base_url, api_key="k", max_retries=0, timeout=5.0) as c:
        stream = await c.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        started = time.monotonic()
        await asyncio.to_thread(up.stop)
        assert time.monotonic() - started < 2.0
        with pytest.raises(openai.APIConnectionError):
            await drain(stream, [])
