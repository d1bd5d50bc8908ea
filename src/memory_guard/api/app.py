"""The application factory: one `create_app(settings)`, every resource opened in its lifespan."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from memory_guard.api import chat, docs, ops, staff, staff_proposals, staff_reports, staff_transfer, ui, v1
from memory_guard.api.auth import KeyRing
from memory_guard.api.errors import install_error_handlers
from memory_guard.api.freshness import ReadYourWrites
from memory_guard.api.headers import StaffHeaders
from memory_guard.api.limits import BodyLimit
from memory_guard.api.openapi import documented
from memory_guard.api.request_id import RequestId
from memory_guard.embeddings.base import Embedder
from memory_guard.ops.tracing import Tracing
from memory_guard.services import Services
from memory_guard.settings import Settings
from memory_guard.upstream.llm import ChatModel

logger = logging.getLogger(__name__)


def create_app(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    chat_model: ChatModel | None = None,
    cross_encoder_file: Path | None = None,
) -> FastAPI:
    """Build the app. `embedder`/`chat_model` replace the configured providers, `cross_encoder_file`
    the shipped cross-encoder (tests, benchmarks)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.dev_mode:
            logger.warning(
                "DEV MODE: no API_KEYS configured; every caller is tenant 'default' with every role. "
                "Do not expose this instance beyond this machine."
            )
        if not settings.llm_configured:
            logger.warning(
                "no LLM upstream is configured: answers from memory work, the other questions end with "
                "llm_not_configured. Set LLM_API_KEY, or LLM_BASE_URL for a server that takes no key"
            )
        services = await Services.open(
            settings, embedder=embedder, chat_model=chat_model, cross_encoder_file=cross_encoder_file
        )
        app.state.services = services
        app.state.tracing = Tracing.configure(settings.otel_exporter_otlp_endpoint)
        try:
            yield
        finally:
            await services.aclose()
            app.state.tracing.shutdown()

    # FastAPI's own docs pages load their scripts from a CDN, which air-gapped users cannot reach:
    # api/docs.py serves Swagger UI at /docs from an installed package instead.
    app = FastAPI(title="memory-guard", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.keyring = KeyRing(settings.keys)
    app.state.metrics_token = settings.metrics_token
    install_error_handlers(app)

    app.add_middleware(ReadYourWrites)
    app.add_middleware(
        BodyLimit,
        max_bytes=settings.max_body_bytes,
        larger={staff_transfer.IMPORT_PATH: settings.import_max_bytes},
    )
    app.add_middleware(StaffHeaders)
    origins = [origin.strip() for origin in settings.cors_origins.split(",") if origin.strip()]
    if origins:
        # A browser frontend on another origin sends a preflight for the Authorization header.
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            # The /v1 scope and cache headers go out, its decision headers come back (docs/API.md).
            allow_headers=[
                "Authorization",
                "Content-Type",
                "X-Request-ID",
                "Cache-Control",
                "X-Memory-Guard-Agent",
                "X-Memory-Guard-Project",
                "X-Memory-Guard-Phase",
            ],
            expose_headers=[
                "X-Request-ID",
                "X-Memory-Guard-Decision",
                "X-Memory-Guard-Entry-Id",
                "X-Memory-Guard-Score",
            ],
        )
    # Outermost, so that every answer carries the request's id: a 413, a CORS refusal, a 500.
    app.add_middleware(RequestId)

    app.include_router(ops.router)
    app.include_router(docs.router)
    app.include_router(chat.router)
    app.include_router(v1.router)
    # Before staff.router, whose /staff/memory/{entry_id} would otherwise take /staff/memory/ui.
    app.include_router(ui.router)
    # Before `staff`, whose /staff/memory/{entry_id} would otherwise take /stats, /audit, /export.
    app.include_router(staff_reports.router)
    app.include_router(staff_transfer.router)
    app.include_router(staff_proposals.router)
    app.include_router(staff.router)
    app.openapi = documented(app)  # type: ignore[method-assign]
    return app
