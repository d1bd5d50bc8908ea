"""A completion run rendered as OpenAI renders one: a `chat.completion`, or its chunks streamed as
Server-Sent Events (`data:` lines only, then `data: [DONE]`), with the guard's decision in the
headers, which are sent before the first chunk."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator

from sse_starlette.sse import EventSourceResponse
from starlette.responses import JSONResponse

from memory_guard.api.errors import openai_error
from memory_guard.api.responses.v1 import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    Choice,
    ChunkChoice,
    CompletionUsage,
    Delta,
    FunctionCall,
    ToolCall,
    ToolCallDelta,
)
from memory_guard.api.sse import PING_SECONDS
from memory_guard.chat.completions import CompletionRun, Failure, Finish
from memory_guard.upstream.llm import TextDelta, ToolCallRequest

DONE = "[DONE]"


def decision_headers(run: CompletionRun) -> dict[str, str]:
    headers = {"x-memory-guard-decision": run.decision.value}
    if run.served is not None:
        headers["x-memory-guard-entry-id"] = str(run.served.entry_id)
        headers["x-memory-guard-score"] = f"{run.served.score:.4f}"
    return headers


async def completion(run: CompletionRun, model: str) -> JSONResponse:
    """The whole answer at once; a failure raises, to be answered as an error (502, 504...)."""
    text: list[str] = []
    calls: list[ToolCall] = []
    finish = Finish("stop")
    async for piece in run.pieces():
        if isinstance(piece, TextDelta):
            text.append(piece.text)
        elif isinstance(piece, ToolCallRequest):
            calls.append(_tool_call(piece))
        elif isinstance(piece, Finish):
            finish = piece
        else:
            raise piece.error
    message = AssistantMessage(content="".join(text) or (None if calls else ""), tool_calls=calls or None)
    body = ChatCompletion(
        id=_completion_id(),
        created=int(time.time()),
        model=model,
        choices=[Choice(message=message, finish_reason=finish.finish_reason)],
        usage=_usage(finish),
    )
    return JSONResponse(body.model_dump(mode="json"), headers=decision_headers(run))


def chunks(run: CompletionRun, model: str, include_usage: bool) -> EventSourceResponse:
    # X-Accel-Buffering: a reverse proxy must not hold the chunks back until the end.
    headers = {**decision_headers(run), "X-Accel-Buffering": "no"}
    return EventSourceResponse(_lines(run, model, include_usage), ping=PING_SECONDS, headers=headers)


async def _lines(run: CompletionRun, model: str, include_usage: bool) -> AsyncIterator[dict[str, str]]:
    chunk_id, created = _completion_id(), int(time.time())

    def line(delta: Delta, finish_reason: str | None = None) -> dict[str, str]:
        choice = ChunkChoice(delta=delta, finish_reason=finish_reason)
        chunk = ChatCompletionChunk(id=chunk_id, created=created, model=model, choices=[choice])
        return {"data": chunk.model_dump_json()}

    yield line(Delta(role="assistant", content=""))
    calls = 0
    async for piece in run.pieces():
        if isinstance(piece, TextDelta):
            yield line(Delta(content=piece.text))
        elif isinstance(piece, ToolCallRequest):
            call = _tool_call(piece)
            yield line(Delta(tool_calls=[ToolCallDelta(index=calls, **call.model_dump())]))
            calls += 1
        elif isinstance(piece, Finish):
            yield line(Delta(), piece.finish_reason)
            if include_usage:
                usage = ChatCompletionChunk(
                    id=chunk_id, created=created, model=model, choices=[], usage=_usage(piece)
                )
                yield {"data": usage.model_dump_json()}
            yield {"data": DONE}
        elif isinstance(piece, Failure):
            # The openai client raises APIError on a `data:` line that holds an `error` object.
            error = piece.error
            yield {"data": openai_error(error.status, error.code, error.message).model_dump_json()}


def _tool_call(request: ToolCallRequest) -> ToolCall:
    return ToolCall(id=request.id, function=FunctionCall(name=request.name, arguments=request.arguments))


def _usage(finish: Finish) -> CompletionUsage:
    return CompletionUsage(
        prompt_tokens=finish.prompt_tokens,
        completion_tokens=finish.completion_tokens,
        total_tokens=finish.prompt_tokens + finish.completion_tokens,
    )


def _completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"
