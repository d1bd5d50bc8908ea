"""A completion as the OpenAI-compatible endpoint answers it, transport-free.

Two kinds of run, both announcing the guard's decision before their first piece:
- the memory run: a `ChatRun` (lookup, a direct answer or the agent loop, the learning policy),
  its events reduced to the pieces of an OpenAI answer: text, then one end or one failure;
- the passthrough: a request that carries the client's own tools, or tool results, goes to the
  upstream as it is, its tool calls come back for the client to run, and it is never answered from
  memory nor learned, since its answer depends on data the gateway cannot see.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from memory_guard.agent.events import CachedResponseEvent, DoneEvent, ErrorEvent, TextEvent
from memory_guard.chat.learning_policy import CacheMode
from memory_guard.chat.request import ChatRequest
from memory_guard.chat.service import ChatRun, ChatService
from memory_guard.conversations.store import Message
from memory_guard.core.decision import Decision
from memory_guard.core.errors import InvalidRequest, MemoryGuardError
from memory_guard.ops.metrics import Metrics
from memory_guard.ops.request_context import note_decision, note_error, note_tokens
from memory_guard.upstream.llm import (
    ANSWER_CAP,
    ChatMessage,
    ChatModel,
    TextDelta,
    ToolCallRequest,
    ToolSchema,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """An OpenAI chat completion request, its shape already checked: the messages and tools as
    the client sent them, the scope and the cache mode."""

    messages: list[ChatMessage]
    tools: list[ToolSchema]
    agent: str | None = None
    project: str | None = None
    phase: str | None = None
    cache: CacheMode = CacheMode.USE


@dataclass(frozen=True, slots=True)
class Passthrough:
    """The client's conversation and tools, sent to the upstream as they are."""

    messages: list[ChatMessage]
    tools: list[ToolSchema]


# The client's own instructions are not sent: an answer learned into the scope's memory must not
# depend on a prompt that the scope's other clients do not share. The agent's profile is the prompt.
_INSTRUCTIONS = ("system", "developer")


@dataclass(frozen=True, slots=True)
class Finish:
    """The answer is complete: why it stopped (OpenAI's finish reasons) and what it cost."""

    finish_reason: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Failure:
    """The run failed after it started; nothing was learned from it."""

    error: MemoryGuardError


Piece = TextDelta | ToolCallRequest | Finish | Failure


@dataclass(frozen=True, slots=True)
class Served:
    """The memory entry a direct answer came from."""

    entry_id: int
    score: float


class CompletionRun(Protocol):
    @property
    def decision(self) -> Decision: ...

    @property
    def served(self) -> Served | None: ...

    def pieces(self) -> AsyncIterator[Piece]:
        """Text and tool calls in order, then exactly one Finish or one Failure."""
        ...


class CompletionService:
    def __init__(
        self, *, chat: ChatService, model: ChatModel, metrics: Metrics, max_message_chars: int
    ) -> None:
        self._chat = chat
        self._model = model
        self._metrics = metrics
        self._max_message_chars = max_message_chars

    async def open(self, tenant: str, request: CompletionRequest) -> CompletionRun:
        """Checks the request and takes the guard's decision; raises the error tree for a request
        that cannot be answered (no question, an unknown agent, a lookup that failed on our side)."""
        if passes_through(request):
            note_decision(Decision.MISS.value, None, None)
            return _PassthroughRun(Passthrough(request.messages, request.tools), self._model, self._metrics)
        run = await self._chat.open(tenant, self._chat_request(request))
        found = await run.decide()
        served = found.served
        return _MemoryRun(
            run, found.decision, Served(served.entry.id, served.score) if served is not None else None
        )

    def _chat_request(self, request: CompletionRequest) -> ChatRequest:
        """The question is the last message, the user's; the earlier ones are its history."""
        said = [m for m in request.messages if m.get("role") not in _INSTRUCTIONS]
        if not said or said[-1].get("role") != "user":
            raise InvalidRequest("the last message must be the user's question", code="no_question")
        question = text_of(said[-1])
        if not question.strip():
            raise InvalidRequest("the last user message must not be empty", code="empty_message")
        if len(question) > self._max_message_chars:
            raise InvalidRequest(
                f"the question is {len(question)} characters long; the limit is {self._max_message_chars}",
                code="message_too_long",
            )
        now = self._chat.clock()
        history = tuple(
            Message(
                0, "", m["role"], "response" if m["role"] == "assistant" else "user_request", text_of(m), now
            )
            for m in said[:-1]
        )
        return ChatRequest(
            message=question,
            agent=request.agent,
            project=request.project,
            phase=request.phase,
            cache=request.cache,
            history=history,
            record=False,
        )


def passes_through(request: CompletionRequest) -> bool:
    """Whether the answer depends on what the gateway cannot see: the client's own tools, their
    calls and results, or content other than text (an image, a file)."""
    return bool(request.tools) or any(
        message.get("role") in ("tool", "function")
        or message.get("tool_calls")
        or message.get("function_call")
        or not _only_text(message.get("content"))
        for message in request.messages
    )


def _only_text(content: Any) -> bool:
    if content is None or isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") == "text" for part in content
    )


def text_of(message: ChatMessage) -> str:
    """A message's text: its content, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content)
    return content or ""


class _MemoryRun:
    def __init__(self, run: ChatRun, decision: Decision, served: Served | None) -> None:
        self._run = run
        self._decision = decision
        self._served = served

    @property
    def decision(self) -> Decision:
        return self._decision

    @property
    def served(self) -> Served | None:
        return self._served

    async def pieces(self) -> AsyncIterator[Piece]:
        # The run's notes (status, skills, grounding) are for /chat's own client: an OpenAI answer
        # has only its text.
        async for event in self._run.events():
            if isinstance(event, CachedResponseEvent):
                yield TextDelta(event.answer)
            elif isinstance(event, TextEvent):
                yield TextDelta(event.content)
            elif isinstance(event, DoneEvent):
                yield Finish("stop", event.usage.prompt_tokens, event.usage.completion_tokens)
            elif isinstance(event, ErrorEvent):
                yield Failure(self._run.failure or MemoryGuardError(event.message, code=event.code))


class _PassthroughRun:
    def __init__(self, request: Passthrough, model: ChatModel, metrics: Metrics) -> None:
        self._request = request
        self._model = model
        self._metrics = metrics

    @property
    def decision(self) -> Decision:
        return Decision.MISS

    @property
    def served(self) -> Served | None:
        return None

    async def pieces(self) -> AsyncIterator[Piece]:
        try:
            async for item in self._model.stream(self._request.messages, self._request.tools):
                if isinstance(item, TextDelta | ToolCallRequest):
                    yield item
                    continue
                self._metrics.tokens.labels(kind="prompt").inc(item.prompt_tokens)
                self._metrics.tokens.labels(kind="completion").inc(item.completion_tokens)
                note_tokens(item.prompt_tokens, item.completion_tokens)
                # Our own cap on the answer's length reads as the upstream's own.
                reason = "length" if item.finish_reason == ANSWER_CAP else item.finish_reason
                yield Finish(reason, item.prompt_tokens, item.completion_tokens)
        except MemoryGuardError as exc:
            self._metrics.llm_calls.labels(outcome="error").inc()
            note_error(exc.code)
            yield Failure(exc)
            return
        except Exception:
            logger.exception("passthrough completion failed")
            note_error("internal_error")
            yield Failure(MemoryGuardError("the completion failed on our side; it has been logged"))
            return
        self._metrics.llm_calls.labels(outcome="ok").inc()
