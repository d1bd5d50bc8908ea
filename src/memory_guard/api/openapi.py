"""What the OpenAPI document declares beyond what FastAPI derives from the routes: the error answers
and the event streams.

The errors are declared once per router (`errors(...)`) with the body every error really has
(api/errors.py renders it; it replaces FastAPI's own 422 schema, which this API never sends), so that
a generated client or a fuzzer knows them. A stream's 200 answer is `text/event-stream`, each frame
one of the event models, named by its `type`; `documented(app)` adds those models to the components.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from memory_guard.agent.events import CHAT_EVENTS, StreamEvent
from memory_guard.api.responses.errors import ErrorBody
from memory_guard.api.responses.transfer import IMPORT_EVENTS
from memory_guard.api.responses.v1 import ChatCompletionChunk, OpenAIErrorBody

_MEANINGS: dict[int | str, str] = {
    400: "The body is not valid JSON.",
    401: "No key, or an unknown one.",
    403: "The key's role may not call this route.",
    404: "No such resource for this tenant.",
    409: "The request conflicts with the current state (duplicate_question names the entry that "
    "holds the question).",
    413: "The body is larger than the limit.",
    422: "A field is invalid; the message names it.",
    503: "Not ready.",
    "5XX": "The service or an upstream failed: internal_error, upstream_error, upstream_timeout, "
    "llm_not_configured.",
}
_REF = "#/components/schemas/{model}"


def errors(*statuses: int | str) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a router: each status with the error body, which is JSON whatever the
    route's own answer is."""
    body = {"application/json": {"schema": {"$ref": _REF.format(model=ErrorBody.__name__)}}}
    return {status: {"description": _MEANINGS[status], "content": body} for status in statuses}


STAFF_ERRORS = errors(400, 401, 403, 404, 413, 422, "5XX")


def stream_of(events: tuple[type[StreamEvent], ...]) -> dict[str, Any]:
    """The `content` of an answer that streams these events. In OpenAPI 3.1 the `schema` of an event
    stream describes one frame (as FastAPI and schemathesis read it): its `event` is the event's
    `type`, its `data` the event's model as JSON."""
    frames = [
        {
            "title": event.model_fields["type"].default,
            "type": "object",
            "properties": {
                "event": {"const": event.model_fields["type"].default},
                "data": {
                    "type": "string",
                    "contentMediaType": "application/json",
                    "contentSchema": {"$ref": _REF.format(model=event.__name__)},
                },
            },
            "required": ["event", "data"],
        }
        for event in events
    ]
    return {"text/event-stream": {"schema": {"oneOf": frames}}}


CHAT_STREAM: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Server-Sent Events: each frame's `event` names it and its `data` is the event as "
        "JSON; the stream ends with exactly one `done` or one `error`.",
        "content": stream_of(CHAT_EVENTS),
    }
}


# The chunk is no route's model: the stream's frames name it. (The completion is the route's.)
OPENAI_MODELS: tuple[type[BaseModel], ...] = (OpenAIErrorBody, ChatCompletionChunk)
_OPENAI_MEANINGS: dict[int | str, str] = {
    400: "The body, a header or the scope is invalid (where the rest of the API answers 422), or the "
    "body is not valid JSON; the message names what.",
    401: "No key, or an unknown one.",
    413: "The body is larger than the limit.",
    "5XX": "The service or the upstream failed: internal_error, upstream_error (502), upstream_timeout "
    "(504), llm_not_configured (503).",
}


def openai_errors(*statuses: int | str) -> dict[int | str, dict[str, Any]]:
    """`errors(...)` for the OpenAI-compatible routes, whose errors have OpenAI's shape."""
    body = {"application/json": {"schema": {"$ref": _REF.format(model=OpenAIErrorBody.__name__)}}}
    return {status: {"description": _OPENAI_MEANINGS[status], "content": body} for status in statuses}


def _header(description: str) -> dict[str, Any]:
    return {"description": description, "schema": {"type": "string"}}


COMPLETION: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "A `chat.completion` (JSON), or with `stream: true` its chunks as Server-Sent "
        "Events: each `data:` a `chat.completion.chunk`, then `[DONE]`; a failure after the start is "
        "one `data:` with OpenAI's error object instead, and no `[DONE]`.",
        "headers": {
            "x-memory-guard-decision": _header("direct, assisted or miss"),
            "x-memory-guard-entry-id": _header("on a direct answer: the entry it came from"),
            "x-memory-guard-score": _header("on a direct answer: the entry's similarity score"),
        },
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "data": {
                            "type": "string",
                            "if": {"const": "[DONE]"},
                            "else": {
                                "contentMediaType": "application/json",
                                "contentSchema": {
                                    "oneOf": [
                                        {"$ref": _REF.format(model=ChatCompletionChunk.__name__)},
                                        {"$ref": _REF.format(model=OpenAIErrorBody.__name__)},
                                    ]
                                },
                            },
                        }
                    },
                    "required": ["data"],
                }
            },
        },
    }
}


def _without_framework_422(schema: dict[str, Any]) -> None:
    """/v1 answers 400 where FastAPI documents a 422 of its own body, which no route sends."""
    for path, operations in schema["paths"].items():
        if path.startswith("/v1/"):
            for operation in operations.values():
                operation["responses"].pop("422", None)
    components = schema.get("components", {}).get("schemas", {})
    if "HTTPValidationError" not in json.dumps(schema["paths"]):
        components.pop("HTTPValidationError", None)
        components.pop("ValidationError", None)


def documented(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """An `app.openapi` whose components also hold the error body and the stream events' models."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            models: tuple[type[BaseModel], ...] = (ErrorBody, *CHAT_EVENTS, *IMPORT_EVENTS, *OPENAI_MODELS)
            _, extra = models_json_schema([(model, "serialization") for model in models], ref_template=_REF)
            for name, model in extra.get("$defs", {}).items():
                if components.setdefault(name, model) != model:
                    raise RuntimeError(f"two different schemas are named {name} in the OpenAPI document")
            _without_framework_422(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    return openapi
