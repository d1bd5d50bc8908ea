"""ChatModel over any OpenAI-compatible upstream (OpenRouter by default), with the openai SDK.

A turn is bounded as a whole, not only per read: `timeout_s` bounds each wait for a byte, which an
upstream sending keep-alive comments or text without end never lets expire, so the connection, the
retries and the streamed answer together end at the turn's deadline (or the caller's, if sooner).
Its text is bounded too: past `max_answer_chars` the turn ends with ANSWER_CAP, like a `length` finish.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletionChunk

from memory_guard.core.errors import UpstreamError, UpstreamNotConfigured
from memory_guard.settings import llm_upstream_configured
from memory_guard.upstream.calls import Upstream
from memory_guard.upstream.llm import (
    ANSWER_CAP,
    ChatMessage,
    StreamItem,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
    TurnEnd,
)
from memory_guard.upstream.redaction import Redactor

DEFAULT_TURN_DEADLINE_S = 120.0
DEFAULT_MAX_ANSWER_CHARS = 200_000
# OpenRouter's app attribution (HTTP-Referer, X-Title) names the software, not a deployment.
APP_URL = "http://localhost:8000"
APP_NAME = "memory-guard"


class OpenAIChatModel:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        max_tokens: int,
        timeout_s: float,
        max_retries: int,
        referer: str = APP_URL,
        title: str = APP_NAME,
        turn_deadline_s: float = DEFAULT_TURN_DEADLINE_S,
        max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
        secrets: Sequence[str] = (),
    ) -> None:
        self._model = model
        self._max_tokens = max_tokens
        self._configured = llm_upstream_configured(base_url, api_key)
        self._turn_deadline_s = turn_deadline_s
        self._max_answer_chars = max_answer_chars
        # The other secrets (the embeddings key) are redacted too: an upstream may echo any header.
        self._upstream = Upstream("LLM upstream", Redactor([api_key, *secrets]), max_retries)
        self._client = AsyncOpenAI(
            base_url=base_url,
            # The SDK refuses an empty key: a server that takes none ignores this one, and without a
            # server of its own stream() refuses to run before any request.
            api_key=api_key or "not-configured",
            timeout=timeout_s,
            # Retried by self._upstream, which knows the deadline the SDK does not.
            max_retries=0,
            default_headers={"HTTP-Referer": referer, "X-Title": title},
        )

    @property
    def model(self) -> str:
        return self._model

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(
        self, messages: list[ChatMessage], tools: list[ToolSchema], *, deadline: float | None = None
    ) -> AsyncIterator[StreamItem]:
        if not self._configured:
            raise llm_not_configured()
        ends = asyncio.get_running_loop().time() + self._turn_deadline_s
        if deadline is not None:
            ends = min(ends, deadline)
        response = await self._upstream.call(lambda: self._open(messages, tools), ends)
        turn = _Turn(self._max_answer_chars)
        async with response:  # closes the HTTP response however the turn ends
            while not turn.capped and (chunk := await self._next(response, ends)) is not None:
                try:
                    items = turn.read(chunk)
                except (AttributeError, TypeError, ValueError):
                    raise self._upstream.malformed(repr(chunk)) from None
                for item in items:
                    yield item
        for item in turn.end():
            yield item

    async def _open(
        self, messages: list[ChatMessage], tools: list[ToolSchema]
    ) -> AsyncStream[ChatCompletionChunk]:
        # The messages and tools go as they are, in `extra_body`, which the SDK sends untouched and
        # which takes precedence: given as arguments, the SDK would walk every message and schema
        # key by key against its TypedDicts (to rename aliased keys, which the wire format we build
        # has none of), costing more than the rest of the request on every turn.
        wire: dict[str, Any] = {"messages": messages}
        if tools:
            wire["tools"] = tools
        response: AsyncStream[ChatCompletionChunk] = await self._client.chat.completions.create(
            model=self._model,
            messages=(),
            max_tokens=self._max_tokens,
            stream=True,
            stream_options={"include_usage": True},
            extra_body=wire,
        )
        return response

    async def _next(self, response: AsyncStream[ChatCompletionChunk], ends: float) -> Any:
        """The next chunk, or None at the end of the stream. Typed Any: it may be anything at all."""
        try:
            async with asyncio.timeout_at(ends):
                return await response.__anext__()
        except StopAsyncIteration:
            return None
        except TimeoutError:
            raise self._upstream.timeout() from None
        except (openai.OpenAIError, ValueError) as exc:
            # ValueError: a chunk that is not JSON.
            raise self._upstream.failure(exc, mid_answer=True) from None


def llm_not_configured() -> UpstreamNotConfigured:
    """What a question that needs the LLM gets when none is configured: what to set."""
    return UpstreamNotConfigured(
        "no LLM is configured, so only questions answered from memory can be answered: set "
        "LLM_API_KEY (the key of LLM_BASE_URL, OpenRouter by default), or set LLM_BASE_URL to a "
        "self-hosted OpenAI-compatible server that takes no key (e.g. Ollama's http://localhost:11434/v1)"
    )


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Turn:
    """The chunks of one turn read so far. `read` raises AttributeError, TypeError or ValueError
    on a chunk of another shape: the SDK builds chunks without validating them."""

    max_chars: int
    chars: int = 0
    capped: bool = False
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def read(self, chunk: Any) -> list[StreamItem]:
        items: list[StreamItem] = []
        if chunk.usage is not None:
            self.prompt_tokens = _count(chunk.usage.prompt_tokens)
            self.completion_tokens = _count(chunk.usage.completion_tokens)
            # Not an OpenAI field: the SDK keeps it as an extra attribute when OpenRouter sends it.
            self.cost = _cost(getattr(chunk.usage, "cost", None))
        if not isinstance(chunk.choices, list):
            raise TypeError("choices is not a list")
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content:
                text = self._take(_text(delta.content))
                if text:
                    items.append(TextDelta(text))
            for fragment in delta.tool_calls or ():
                if not isinstance(fragment.index, int):
                    raise TypeError("tool call index is not an integer")
                partial = self.calls.setdefault(fragment.index, _PartialCall())
                if fragment.id:
                    partial.id = _text(fragment.id)
                if fragment.function and fragment.function.name:
                    partial.name = _text(fragment.function.name)
                if fragment.function and fragment.function.arguments:
                    partial.arguments.append(self._take(_text(fragment.function.arguments)))
            if self.capped:
                return items
            if choice.finish_reason:
                self.finish_reason = _text(choice.finish_reason)
        return items

    def end(self) -> list[StreamItem]:
        if self.capped:
            # Half a tool call's arguments are of no use: the turn ends on its text alone.
            return [TurnEnd(ANSWER_CAP, self.prompt_tokens, self.completion_tokens, self.cost)]
        if self.finish_reason is None:
            # A stream that stops without saying why was cut: its text may be half an answer.
            raise UpstreamError("the LLM stream ended before the answer was complete")
        items: list[StreamItem] = [
            ToolCallRequest(partial.id or f"call_{index}", partial.name, "".join(partial.arguments))
            for index, partial in sorted(self.calls.items())
        ]
        items.append(TurnEnd(self.finish_reason, self.prompt_tokens, self.completion_tokens, self.cost))
        return items

    def _take(self, text: str) -> str:
        """What of `text` fits under the cap; the turn is capped once something did not."""
        room = self.max_chars - self.chars
        if len(text) > room:
            text = text[: max(room, 0)]
            self.capped = True
        self.chars += len(text)
        return text


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _cost(value: object) -> float | None:
    """The upstream's cost, or None: a field outside the OpenAI format that we do not understand
    must not fail the answer, it only leaves the cost unknown."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < float("inf"):
        return None
    return float(value)


def _count(value: object) -> int:
    if value is None:  # some providers send null counts
        return 0
    if not isinstance(value, int) or value < 0:
        raise TypeError("a token count is not a non-negative integer")
    return value
