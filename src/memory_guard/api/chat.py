"""Chat routes: the SSE stream, conversation history and feedback."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from sse_starlette.sse import EventSourceResponse

from memory_guard.api.deps import ClientDep, ServicesDep
from memory_guard.api.schemas import ChatBody, FeedbackBody
from memory_guard.api.sse import event_stream
from memory_guard.chat.service import ChatRequest
from memory_guard.errors import InvalidRequest

router = APIRouter()


def _request(body: ChatBody, conversation_id: str | None, max_chars: int) -> ChatRequest:
    if not body.message.strip():
        raise InvalidRequest("message must not be empty", code="empty_message")
    if len(body.message) > max_chars:
        raise InvalidRequest(
            f"message is {len(body.message)} characters long; the limit is {max_chars}",
            code="message_too_long",
        )
    if conversation_id and body.conversation_id and body.conversation_id != conversation_id:
        raise InvalidRequest(
            "conversation_id in the body differs from the one in the path", code="conflicting_ids"
        )
    return ChatRequest(
        message=body.message,
        conversation_id=conversation_id or body.conversation_id,
        type=body.type,
        agent=body.agent,
        project=body.project,
        phase=body.phase,
        entreprise=body.entreprise,
        cache=body.cache,
    )


@router.post("/chat", response_class=EventSourceResponse)
async def chat(body: ChatBody, principal: ClientDep, services: ServicesDep) -> EventSourceResponse:
    run = await services.chat.open(
        principal.tenant, _request(body, None, services.settings.max_message_chars)
    )
    return event_stream(run.events())


@router.post("/chat/{conversation_id}/message", response_class=EventSourceResponse)
async def chat_message(
    conversation_id: str, body: ChatBody, principal: ClientDep, services: ServicesDep
) -> EventSourceResponse:
    request = _request(body, conversation_id, services.settings.max_message_chars)
    run = await services.chat.open(principal.tenant, request)
    return event_stream(run.events())


@router.get("/chat/{conversation_id}/messages")
async def messages(conversation_id: str, principal: ClientDep, services: ServicesDep) -> dict[str, Any]:
    history = await services.conversations.history(principal.tenant, conversation_id)
    return {"items": [message.to_public() for message in history]}


@router.post("/chat/{conversation_id}/messages/{message_id}/feedback")
async def feedback(
    conversation_id: str, message_id: int, body: FeedbackBody, principal: ClientDep, services: ServicesDep
) -> dict[str, Any]:
    entry = await services.conversations.feedback(
        principal.tenant, conversation_id, message_id, body.validated, body.corrected_answer
    )
    return {"entry_id": entry.id, "status": entry.status.value}
