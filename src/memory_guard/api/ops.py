"""Health, readiness and metrics."""

from __future__ import annotations

from fastapi import APIRouter, Response, Security

from memory_guard.api.auth import metrics_reader
from memory_guard.api.deps import ServicesDep
from memory_guard.api.openapi import errors
from memory_guard.api.responses.ops import Health, Ready, UpstreamReadiness
from memory_guard.core.errors import NotReady
from memory_guard.ops.metrics import METRICS_CONTENT_TYPE

router = APIRouter()


class MetricsResponse(Response):
    media_type = METRICS_CONTENT_TYPE


@router.get("/healthz")
async def healthz() -> Health:
    return Health(status="ok")


@router.get("/readyz", responses=errors(503))
async def readyz(services: ServicesDep) -> Ready:
    try:
        store_ok = await services.db.ping()
        embedder_ok = await services.readiness.embedder_ok()
    except Exception as exc:
        raise NotReady(f"not ready: {type(exc).__name__}") from exc
    if not store_ok or not embedder_ok:
        raise NotReady("not ready: store or embedder check failed")
    cross_encoder = services.cross_encoder
    if cross_encoder is not None and not cross_encoder.ready:
        raise NotReady("not ready: the cross-encoder is closed")
    upstream = await services.upstream.state()
    return Ready(
        status="ready",
        store="ok",
        embedder=services.embedder.model_id,
        cross_encoder=cross_encoder.model_id if cross_encoder is not None else None,
        upstream=UpstreamReadiness(
            configured=upstream.configured, reachable=upstream.reachable, detail=upstream.detail
        ),
    )


@router.get(
    "/metrics",
    response_class=MetricsResponse,
    responses=errors(401),
    dependencies=[Security(metrics_reader)],
)
async def metrics(services: ServicesDep) -> MetricsResponse:
    """The Prometheus text format."""
    return MetricsResponse(services.metrics.render())
