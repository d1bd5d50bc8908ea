"""What the OpenAPI document declares beyond the routes: the error answers and the bearer key.

The errors are declared once per router (`errors(...)`), with the body every 4xx really has, so that a
generated client or a fuzzer knows them; the bearer scheme is added to every route that reads a key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from memory_guard.api.schemas import ErrorBody

_MEANINGS = {
    400: "The body is not valid JSON.",
    401: "No key, or an unknown one.",
    403: "The key's role may not call this route.",
    404: "No such resource for this tenant.",
    409: "The request conflicts with the current state.",
    413: "The body is larger than the limit.",
    422: "A field is invalid; the message names it.",
    503: "Not ready.",
}

# Routes whose dependencies read the bearer key (the staff page itself needs none).
_KEYED_PREFIXES = ("/chat", "/staff/")


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a router: each status with the error body."""
    return {status: {"model": ErrorBody, "description": _MEANINGS[status]} for status in statuses}


STAFF_ERRORS = errors(400, 401, 403, 404, 413, 422)


def with_bearer(app: FastAPI) -> Callable[[], dict[str, Any]]:
    """An `app.openapi` that also declares the bearer key on the keyed routes."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
            schema.setdefault("components", {})["securitySchemes"] = {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API key of API_KEYS; its tenant and role decide what it sees.",
                }
            }
            for path, operations in schema.get("paths", {}).items():
                if path.startswith(_KEYED_PREFIXES):
                    for operation in operations.values():
                        operation["security"] = [{"bearer": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    return openapi
