"""The one place where errors become HTTP responses: `{"error": {"code", "message"}}`."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from memory_guard.api.responses.errors import ErrorBody, ErrorDetail
from memory_guard.core.errors import MemoryGuardError
from memory_guard.core.field_errors import describe_field_errors

logger = logging.getLogger(__name__)


def error_response(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    body = ErrorBody(error=ErrorDetail(code=code, message=message, **extra))
    return JSONResponse(body.model_dump(mode="json"), status_code=status)


async def _domain(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemoryGuardError)
    return error_response(exc.status, exc.code, exc.message, **exc.extra)


async def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = exc.errors()
    if any(p.get("type") == "json_invalid" for p in problems):
        return error_response(400, "invalid_json", "the request body is not valid JSON")
    details = describe_field_errors(problems, unnamed="body", skip=("body",))
    return error_response(422, "invalid_request", details)


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    # 400: the framework could not read the body at all (not UTF-8, or nested past what json reads).
    codes = {400: "invalid_body", 404: "not_found", 405: "method_not_allowed"}
    response = error_response(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))
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


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal_error", "something failed on our side; it has been logged")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(MemoryGuardError, _domain)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
