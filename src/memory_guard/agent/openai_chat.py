"""ChatModel over any OpenAI-compatible upstream (OpenRouter by default), with the openai SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import openai
from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletionChunk

from memory_guard.agent.llm import ChatMessage, StreamItem, TextDelta, ToolCallRequest, ToolSchema, TurnEnd
from memory_guard.errors import UpstreamError, UpstreamTimeout


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


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
        referer: str,
        title: str,
    ) -> None:
        self._model = model
        self._max_tokens = max_tokens
        self._client = AsyncOpenAI(
            base_url=base_url,
            # The SDK refuses an empty key; an upstream without auth simply ignores this one.
            api_key=api_key or "not-configured",
            timeout=timeout_s,
            max_retries=max_retries,
            default_headers={"HTTP-Referer": referer, "X-Title": title},
        )

    @property
    def model(self) -> str:
        return self._model

    async def aclose(self) -> None:
        await self._client.close()

    async def stream(self, messages: list[ChatMessage], tools: list[ToolSchema]) -> AsyncIterator[StreamItem]:
        try:
            async for item in self._stream(messages, tools):
                yield item
        except openai.APITimeoutError as exc:
            raise UpstreamTimeout("the LLM upstream did not answer in time") from exc
        except openai.APIStatusError as exc:
            raise UpstreamError(
                f"the LLM upstream answered HTTP {exc.status_code}: {_short(exc.message)}"
            ) from exc
        except openai.APIConnectionError as exc:
            raise UpstreamError("the connection to the LLM upstream failed or broke off mid-answer") from exc
        except openai.APIError as exc:
            raise UpstreamError(f"the LLM upstream sent something unusable: {type(exc).__name__}") from exc

    async def _stream(
        self, messages: list[ChatMessage], tools: list[ToolSchema]
    ) -> AsyncIterator[StreamItem]:
        options: dict[str, Any] = {"tools": tools} if tools else {}
        # Plain dicts of the wire format; the SDK's TypedDicts would add nothing here.
        wire_messages: Any = messages
        response: AsyncStream[ChatCompletionChunk] = await self._client.chat.completions.create(
            model=self._model,
            messages=wire_messages,
            max_tokens=self._max_tokens,
            stream=True,
            stream_options={"include_usage": True},
            **options,
        )
        calls: dict[int, _PartialCall] = {}
        finish_reason: str | None = None
        prompt_tokens = completion_tokens = 0
        async with response:
            async for chunk in response:
                if chunk.usage is not None:
                    prompt_tokens = chunk.usage.prompt_tokens
                    completion_tokens = chunk.usage.completion_tokens
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        yield TextDelta(delta.content)
                    for fragment in delta.tool_calls or ():
                        partial = calls.setdefault(fragment.index, _PartialCall())
                        if fragment.id:
                            partial.id = fragment.id
                        if fragment.function and fragment.function.name:
                            partial.name = fragment.function.name
                        if fragment.function and fragment.function.arguments:
                            partial.arguments.append(fragment.function.arguments)
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
        if finish_reason is None:
            # A stream that stops without saying why was cut: its text may be half an answer.
            raise UpstreamError("the LLM stream ended before the answer was complete")
        for index in sorted(calls):
            partial = calls[index]
            yield ToolCallRequest(partial.id or f"call_{index}", partial.name, "".join(partial.arguments))
        yield TurnEnd(finish_reason, prompt_tokens, completion_tokens)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
