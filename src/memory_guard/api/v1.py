"""The OpenAI-compatible endpoint: `POST /v1/chat/completions` and `GET /v1/models`, for clients of
the official `openai` SDK pointed at `base_url=<service>/v1` with a memory-guard key (docs/API.md,
"OpenAI-compatible endpoint"). Its errors have OpenAI's shape (api/errors.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from memory_guard.api import v1_answer
from memory_guard.api.deps import ClientDep, ServicesDep
from memory_guard.api.openapi import COMPLETION, openai_errors
from memory_guard.api.responses.v1 import ChatCompletion, Model, ModelList
from memory_guard.api.v1_request import CompletionBody, Directions, completion_request, directions

router = APIRouter(prefix="/v1", tags=["OpenAI-compatible"], responses=openai_errors(400, 401, 413, "5XX"))


@router.get("/models")
async def models(principal: ClientDep, services: ServicesDep) -> ModelList:
    """The configured LLM's model; a completion may name any model and is answered by this one."""
    return ModelList(data=[Model(id=services.chat_model.model)])


# The model documents the JSON answer; the route returns it (or the stream) already rendered.
@router.post("/chat/completions", response_model=ChatCompletion, responses=COMPLETION)
async def chat_completions(
    body: CompletionBody,
    given: Annotated[Directions, Depends(directions)],
    principal: ClientDep,
    services: ServicesDep,
) -> Response:
    """The question is the last user message; the guard decides before the LLM runs, and the
    decision is in the headers of the answer, streamed or not."""
    run = await services.completions.open(principal.tenant, completion_request(body, given))
    if body.stream:
        return v1_answer.chunks(run, body.model, body.include_usage)
    return await v1_answer.completion(run, body.model)
