"""A real HTTP, OpenAI-compatible chat completions upstream for tests (no mocks).

``FakeUpstream`` serves ``POST /v1/chat/completions`` with uvicorn in a background thread and answers
from a FIFO script of ``Reply`` objects, streaming SSE chunks (tool calls in fragments) like real
providers do. Failure modes: HTTP error status, delay before headers, delay between chunks, an abrupt
cut mid-stream (the openai SDK raises ``openai.APIConnectionError`` while iterating) and a hang after
the headers (the SDK raises ``openai.APITimeoutError`` once its read timeout expires).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.serving import ThreadedServer

__all__ = ["FakeUpstream", "RecordedRequest", "Reply", "ToolCall"]

_ERROR_TYPES = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_exceeded"}


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=lambda: _new_id("call_"))


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None  # None: "tool_calls" if tool_calls else "stop"
    usage: tuple[int, int] | None = None  # (prompt, completion); None: estimated from lengths
    status: int | None = None  # answer this HTTP status with an OpenAI-style JSON error body
    error_message: str = "fake upstream error"
    delay_s: float = 0.0  # sleep before sending the response headers
    chunk_delay_s: float = 0.0  # sleep between SSE chunks
    # send that many `data:` chunks (role chunk included), then drop the connection abruptly (no [DONE])
    cut_after_chunks: int | None = None
    hang: bool = False  # after the headers send nothing until release() or stop()


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lowercased names
    body: dict[str, Any]
    completed: bool = False  # the whole response (incl. [DONE] when streaming) was produced
    disconnected: bool = False  # the client went away while the stream was in progress


class _CutStream(Exception):
    """Raised inside the body iterator so uvicorn closes the socket without ending the body."""


class _QuietCut(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, BaseExceptionGroup):
            return not exc.subgroup(_CutStream)
        return not isinstance(exc, _CutStream)


logging.getLogger("uvicorn.error").addFilter(_QuietCut())


def _pieces(s: str, n: int = 3) -> list[str]:
    size = max(1, -(-len(s) // n))
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


def _tokens(s: str) -> int:
    return max(1, len(s) // 4)


class FakeUpstream:
    def __init__(self, default: Reply | None = None, model: str = "fake-model") -> None:
        self.default = default if default is not None else Reply(text="OK")
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._release_gen = 0
        self._server: ThreadedServer | None = None
        self._port = 0
        routes = [Route("/v1/chat/completions", self._chat, methods=["POST"])]
        self.app = Starlette(routes=routes)

    # -- lifecycle ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def start(self) -> FakeUpstream:
        self._closing.clear()
        self._server = ThreadedServer(self.app)
        self._server.start()
        self._port = self._server.port
        return self

    def stop(self) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.stop()
        self._server = None

    def __enter__(self) -> FakeUpstream:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- script and records ---------------------------------------------------------------------
    def push(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def release(self) -> None:
        """Let every request currently hanging (Reply.hang) go on with its reply."""
        with self._lock:
            self._release_gen += 1

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self._release_gen += 1

    @property
    def calls(self) -> int:
        with self._lock:
            return sum(1 for r in self.requests if r.path == "/v1/chat/completions")

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    # -- server side ----------------------------------------------------------------------------
    async def _sleep(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        # polling: the events are set from the test thread, not from this server loop
        while not self._closing.is_set() and (left := end - time.monotonic()) > 0:  # noqa: ASYNC110
            await asyncio.sleep(min(left, 0.02))

    async def _chat(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = None
        rec = RecordedRequest(
            request.url.path,
            {k.lower(): v for k, v in request.headers.items()},
            body if isinstance(body, dict) else {},
        )
        with self._lock:
            self.requests.append(rec)
            reply = self._queue.popleft() if self._queue else self.default
            gen = self._release_gen
        await self._sleep(reply.delay_s)
        if not isinstance(body, dict):
            return self._error(400, "request body is not a JSON object")
        if reply.status is not None and reply.status >= 400:
            rec.completed = True
            return self._error(reply.status, reply.error_message)
        model = str(body.get("model") or self.model)
        prompt = sum(_tokens(str(m.get("content") or "")) for m in body.get("messages", []))
        produced = reply.text + "".join(json.dumps(t.arguments) for t in reply.tool_calls)
        usage = reply.usage or (prompt, _tokens(produced))
        usage_obj = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
        finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
        if not body.get("stream"):
            rec.completed = True
            return JSONResponse(self._completion(reply, model, finish, usage_obj))
        base = {"id": _new_id("chatcmpl-"), "object": "chat.completion.chunk", "created": int(time.time())}
        base |= {"model": model, "system_fingerprint": None}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": d, "logprobs": None, "finish_reason": f}]}
            for d, f in self._deltas(reply, finish)
        ]
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks = [{**c, "usage": None} for c in chunks] + [{**base, "choices": [], "usage": usage_obj}]
        sse = self._stream(chunks, reply, rec, gen)
        return StreamingResponse(sse, media_type="text/event-stream", headers={"cache-control": "no-cache"})

    @staticmethod
    def _error(status: int, message: str) -> JSONResponse:
        kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        err = {"message": message, "type": kind, "param": None, "code": kind}
        return JSONResponse({"error": err}, status_code=status)

    @staticmethod
    def _completion(reply: Reply, model: str, finish: str, usage: dict[str, int]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None, "refusal": None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": t.id,
                    "type": "function",
                    "function": {"name": t.name, "arguments": json.dumps(t.arguments)},
                }
                for t in reply.tool_calls
            ]
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        return {
            "id": _new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [choice],
            "usage": usage,
        }

    @staticmethod
    def _deltas(reply: Reply, finish: str) -> list[tuple[dict[str, Any], str | None]]:
        out: list[tuple[dict[str, Any], str | None]] = [({"role": "assistant", "content": ""}, None)]
        out += [({"content": w}, None) for w in re.split(r"(?<=\s)(?=\S)", reply.text) if w]
        for i, t in enumerate(reply.tool_calls):
            head = {"index": i, "id": t.id, "type": "function", "function": {"name": t.name, "arguments": ""}}
            out.append(({"tool_calls": [head]}, None))
            out += [
                ({"tool_calls": [{"index": i, "function": {"arguments": p}}]}, None)
                for p in _pieces(json.dumps(t.arguments))
            ]
        out.append(({}, finish))
        return out

    async def _stream(
        self, chunks: list[dict[str, Any]], reply: Reply, rec: RecordedRequest, gen: int
    ) -> AsyncIterator[bytes]:
        try:
            while reply.hang and gen == self._release_gen and not self._closing.is_set():  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            for n, chunk in enumerate(chunks):
                if n:
                    await self._sleep(reply.chunk_delay_s)
                if self._closing.is_set() or n == reply.cut_after_chunks:
                    raise _CutStream
                yield f"data: {json.dumps(chunk)}\n\n".encode()
            if self._closing.is_set() or reply.cut_after_chunks is not None:
                raise _CutStream
            yield b"data: [DONE]\n\n"
            rec.completed = True
        except (asyncio.CancelledError, GeneratorExit):
            rec.disconnected = True
            raise
