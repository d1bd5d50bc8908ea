"""A quick OpenAI-compatible streaming upstream for the load benchmark, in its own process.

`POST /v1/chat/completions` with `"stream": true` answers at once with the chunks a real provider
sends (a role chunk, a few content pieces, the finish chunk, a usage chunk when
`stream_options.include_usage` asks for it, then `[DONE]`), so that a miss through memory-guard and
a call made straight to it can be timed against each other. It listens on loopback only; it is the
bench's own (not tests/upstream.py) so that work on the test double cannot move these figures.

Run: python bench/upstream.py --port PORT
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

ANSWER_PIECES = ("Voici ", "la ", "réponse ", "du ", "modèle ", "de ", "test.")


def chunk(base: dict[str, Any], delta: dict[str, Any], finish: str | None) -> bytes:
    """One `chat.completion.chunk` server-sent event."""
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return f"data: {json.dumps({**base, 'choices': [choice]})}\n\n".encode()


def chunk_base(model: str) -> dict[str, Any]:
    """The fields every chunk of one streamed completion shares."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
    }


async def _stream(model: str, include_usage: bool) -> AsyncIterator[bytes]:
    base = chunk_base(model)
    yield chunk(base, {"role": "assistant", "content": ""}, None)
    for piece in ANSWER_PIECES:
        yield chunk(base, {"content": piece}, None)
    yield chunk(base, {}, "stop")
    if include_usage:
        usage = {"prompt_tokens": 20, "completion_tokens": len(ANSWER_PIECES)}
        usage["total_tokens"] = sum(usage.values())
        yield f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode()
    yield b"data: [DONE]\n\n"


async def completions(request: Request) -> Response:
    body = json.loads(await request.body())
    model = str(body.get("model") or "bench-model")
    if not body.get("stream"):
        message = {"role": "assistant", "content": "".join(ANSWER_PIECES)}
        return JSONResponse(
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 7, "total_tokens": 27},
            }
        )
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    return StreamingResponse(_stream(model, include_usage), media_type="text/event-stream")


app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
