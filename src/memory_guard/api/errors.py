"""The one place where errors become HTTP responses: `{"error": {"code", "message"}}`, and under
/v1 OpenAI's own `{"error": {"message", "type", "code", "param"}}`, so that its clients raise their
usual exceptions."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from memory_guard.api.responses.errors import ErrorBody, ErrorDetail
from memory_guard.api.responses.v1 import OpenAIErrorBody, OpenAIErrorDetail
from memory_guard.core.errors import MemoryGuardError
from memory_guard.core.field_errors import describe_field_errors

logger = logging.getLogger(__name__)


OPENAI_PREFIX = "/v1/"


def error_response(status: int, code: str, message: str, *, path: str = "", **extra: Any) -> JSONResponse:
    """The error answer of a request to `path`."""
    if path.startswith(OPENAI_PREFIX):
        # OpenAI answers 400 to a request it cannot take, where the rest of the API says 422.
        status = 400 if status == 422 else status
        return JSONResponse(openai_error(status, code, message).model_dump(mode="json"), status_code=status)
    body = ErrorBody(error=ErrorDetail(code=code, message=message, **extra))
    return JSONResponse(body.model_dump(mode="json"), status_code=status)


_OPENAI_TYPES = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_error"}


def openai_error(status: int, code: str, message: str) -> OpenAIErrorBody:
    kind = "api_error" if status >= 500 else _OPENAI_TYPES.get(status, "invalid_request_error")
    return OpenAIErrorBody(error=OpenAIErrorDetail(message=message, type=kind, code=code))


async def _domain(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemoryGuardError)
    return error_response(exc.status, exc.code, exc.message, path=request.url.path, **exc.extra)


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = exc.errors()
    if any(p.get("type") == "json_invalid" for p in problems):
        return error_response(
            400, "invalid_json", "the request body is not valid JSON", path=request.url.path
        )
    details = describe_field_errors(problems, unnamed="body", skip=("body",))
    return error_response(422, "invalid_request", details, path=request.url.path)


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    # 400: the framework could not read the body at all (not UTF-8, or nested past what json reads).
    codes = {400: "invalid_body", 404: "not_found", 405: "method_not_allowed"}
    code = codes.get(exc.status_code, "http_error")
    response = error_response(exc.status_code, code, str(exc.detail), path=request.url.path)
    response.headers.update(exc.headers or {})
    if exc.status_code == 405:
        # HTTP requires a 405 to name what the path takes; the router names only the first route
        # that matched the path (GET /staff/memory), not its siblings (POST /staff/memory).
        response.headers["Allow"] = _allowed_methods(request) or response.headers.get("Allow", "")
    return response


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def _allowed_methods(request: Request) -> str:
    allowed = []
    for method in _METHODS:
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] is Match.FULL for route in request.app.router.routes):
            allowed.append(method)
    return ", ".join(allowed)


def internal_error_response(path: str) -> JSONResponse:
    message = "something failed on our side; it has been logged"
    return error_response(500, "internal_error", message, path=path)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return internal_error_response(request.url.path)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(MemoryGuardError, _domain)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
