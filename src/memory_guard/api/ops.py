"""Health, readiness and metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from memory_guard.api.auth import bearer_token, same_secret
from memory_guard.api.deps import ServicesDep
from memory_guard.core.errors import NotReady, Unauthorized
from memory_guard.ops.metrics import METRICS_CONTENT_TYPE

router = APIRouter()


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(services: ServicesDep) -> dict[str, Any]:
    try:
        store_ok = await services.db.ping()
        embedder_ok = await services.readiness.embedder_ok()
    except Exception as exc:
        raise NotReady(f"not ready: {type(exc).__name__}") from exc
    if not store_ok or not embedder_ok:
        raise NotReady("not ready: store or embedder check failed")
    return {"status": "ready", "store": "ok", "embedder": services.embedder.model_id}


@router.get("/metrics")
async def metrics(services: ServicesDep, request: Request) -> Response:
    token = services.settings.metrics_token.get_secret_value()
    if token and not same_secret(token, bearer_token(request.headers.get("authorization"))):
        raise Unauthorized("/metrics needs Authorization: Bearer <METRICS_TOKEN>", code="invalid_key")
    return Response(services.metrics.render(), media_type=METRICS_CONTENT_TYPE)
