"""A real HTTP, OpenAI-compatible chat completions upstream for tests (no mocks).

``FakeUpstream`` serves ``POST /v1/chat/completions`` with uvicorn in a background thread and answers
from a FIFO script of ``Reply`` objects, streaming SSE chunks (tool calls in fragments) like real
providers do. Failure modes: HTTP error status (optionally echoing the caller's key, as OpenAI's 401
does), delay before headers, a hang before or after the headers, delay between chunks, an abrupt cut
mid-stream (the openai SDK raises ``openai.APIConnectionError`` while iterating), SSE keep-alive
comments or text without end (no read timeout ever fires on those) and a malformed chunk.

``POST /v1/embeddings`` answers from its own script (``push_embeddings``) with small deterministic
vectors; it honours the status, key echo, delay, hang and keep-alive modes (keep-alive there is
whitespace trickled before the JSON body, which JSON allows).

``GET /v1/models`` lists ``model`` and answers from its own script too (``push_models``: status, delay,
hang before the headers).
"""

from __future__ import annotations

import asyncio
import hashlib
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
    cost: Any = None  # sent as usage.cost (OpenRouter's own cost of the call) when not None
    status: int | None = None  # answer this HTTP status with an OpenAI-style JSON error body
    error_message: str = "fake upstream error"
    delay_s: float = 0.0  # sleep before sending the response headers
    chunk_delay_s: float = 0.0  # sleep between SSE chunks
    # send that many `data:` chunks (role chunk included), then drop the connection abruptly (no [DONE])
    cut_after_chunks: int | None = None
    hang: bool = False  # after the headers send nothing until release() or stop()
    hang_before_headers: bool = False  # send nothing at all until release(), reset() or stop()
    echo_key: bool = False  # with `status`: the error message quotes the caller's bearer key
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers (e.g. retry-after)
    # after the first chunk, SSE keep-alive comments every 20 ms until release(), stop() or the client leaves
    keepalive: bool = False
    # `text` streamed again and again (every chunk_delay_s, at least 10 ms), never a finish_reason
    endless: bool = False
    raw_data: str | None = None  # sent verbatim as the data of the second SSE event (a malformed chunk)


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
        self._embedding_queue: deque[Reply] = deque()
        self._models_queue: deque[Reply] = deque()
        routes = [
            Route("/v1/chat/completions", self._chat, methods=["POST"]),
            Route("/v1/embeddings", self._embeddings, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ]
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

    def push_embeddings(self, *replies: Reply) -> None:
        with self._lock:
            self._embedding_queue.extend(replies)

    def push_models(self, *replies: Reply) -> None:
        """Script `GET /v1/models`: its status, delay and hang_before_headers are honoured."""
        with self._lock:
            self._models_queue.extend(replies)

    def release(self) -> None:
        """Let every request currently hanging (Reply.hang) go on with its reply."""
        with self._lock:
            self._release_gen += 1

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._embedding_queue.clear()
            self._models_queue.clear()
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

    def _held(self, gen: int) -> bool:
        return gen == self._release_gen and not self._closing.is_set()

    async def _receive(
        self, request: Request, queue: deque[Reply], default: Reply
    ) -> tuple[Any, RecordedRequest, Reply, int]:
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
            reply = queue.popleft() if queue else default
            gen = self._release_gen
        await self._sleep(reply.delay_s)
        while reply.hang_before_headers and self._held(gen):
            if await request.is_disconnected():
                rec.disconnected = True
                break
            await asyncio.sleep(0.01)
        return body, rec, reply, gen

    def _failure(self, reply: Reply, rec: RecordedRequest) -> Response | None:
        if reply.status is None or reply.status < 400:
            return None
        rec.completed = True
        message = reply.error_message
        if reply.echo_key:
            key = rec.headers.get("authorization", "").removeprefix("Bearer ")
            message = f"Incorrect API key provided: {key}. You can find your API key in your account."
        return self._error(reply.status, message, reply.headers)

    async def _chat(self, request: Request) -> Response:
        body, rec, reply, gen = await self._receive(request, self._queue, self.default)
        if not isinstance(body, dict):
            return self._error(400, "request body is not a JSON object")
        if (failure := self._failure(reply, rec)) is not None:
            return failure
        model = str(body.get("model") or self.model)
        prompt = sum(_tokens(str(m.get("content") or "")) for m in body.get("messages", []))
        produced = reply.text + "".join(json.dumps(t.arguments) for t in reply.tool_calls)
        usage = reply.usage or (prompt, _tokens(produced))
        usage_obj = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
        if reply.cost is not None:
            usage_obj["cost"] = reply.cost
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
        headers = {"cache-control": "no-cache", **reply.headers}
        return StreamingResponse(sse, media_type="text/event-stream", headers=headers)

    async def _embeddings(self, request: Request) -> Response:
        body, rec, reply, gen = await self._receive(request, self._embedding_queue, Reply())
        if not isinstance(body, dict) or not isinstance(body.get("input"), list):
            return self._error(400, "input must be a list of texts")
        if (failure := self._failure(reply, rec)) is not None:
            return failure
        data = [
            {"object": "embedding", "index": i, "embedding": _vector(str(text))}
            for i, text in enumerate(body["input"])
        ]
        usage = {"prompt_tokens": len(data), "total_tokens": len(data)}
        payload = json.dumps({"object": "list", "data": data, "model": body.get("model"), "usage": usage})

        async def trickle() -> AsyncIterator[bytes]:
            try:
                while reply.keepalive and self._held(gen):
                    yield b" "
                    await asyncio.sleep(0.02)
                yield payload.encode()
                rec.completed = True
            except (asyncio.CancelledError, GeneratorExit):
                rec.disconnected = True
                raise

        return StreamingResponse(trickle(), media_type="application/json", headers=reply.headers)

    async def _models(self, request: Request) -> Response:
        _, rec, reply, _ = await self._receive(request, self._models_queue, Reply())
        if (failure := self._failure(reply, rec)) is not None:
            return failure
        rec.completed = True
        model = {"id": self.model, "object": "model", "created": 0, "owned_by": "fake"}
        return JSONResponse({"object": "list", "data": [model]}, headers=reply.headers)

    @staticmethod
    def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
        kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        err = {"message": message, "type": kind, "param": None, "code": kind}
        return JSONResponse({"error": err}, status_code=status, headers=headers)

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
            while reply.hang and self._held(gen):  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            for n, chunk in enumerate(chunks):
                if n:
                    await self._sleep(reply.chunk_delay_s)
                if self._closing.is_set() or n == reply.cut_after_chunks:
                    raise _CutStream
                yield f"data: {json.dumps(chunk)}\n\n".encode()
                if n == 0:
                    async for extra in self._faults(chunk, reply, gen):
                        yield extra
            if self._closing.is_set() or reply.cut_after_chunks is not None:
                raise _CutStream
            yield b"data: [DONE]\n\n"
            rec.completed = True
        except (asyncio.CancelledError, GeneratorExit):
            rec.disconnected = True
            raise

    async def _faults(self, first: dict[str, Any], reply: Reply, gen: int) -> AsyncIterator[bytes]:
        """What the fault modes send after the first chunk."""
        if reply.raw_data is not None:
            yield f"data: {reply.raw_data}\n\n".encode()
        while reply.keepalive and self._held(gen):
            yield b": keep-alive\n\n"
            await asyncio.sleep(0.02)
        while reply.endless and self._held(gen):
            piece = {
                **first,
                "choices": [{"index": 0, "delta": {"content": reply.text}, "finish_reason": None}],
            }
            yield f"data: {json.dumps(piece)}\n\n".encode()
            await asyncio.sleep(max(reply.chunk_delay_s, 0.01))


def _vector(text: str, width: int = 8) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [1.0 + digest[i] / 255 for i in range(width)]
