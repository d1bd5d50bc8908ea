"""Chat routes: the SSE stream, conversation history and feedback."""

from __future__ import annotations

from fastapi import APIRouter
from sse_starlette.sse import EventSourceResponse

from memory_guard.api.deps import ClientDep, ServicesDep
from memory_guard.api.openapi import CHAT_STREAM, errors
from memory_guard.api.params import ConversationId, Id
from memory_guard.api.responses.chat import FeedbackOut, Messages
from memory_guard.api.schemas import ChatBody, FeedbackBody
from memory_guard.api.sse import event_stream
from memory_guard.chat.request import ChatRequest
from memory_guard.core.bounds import bounded_json
from memory_guard.core.errors import InvalidRequest
from memory_guard.settings import Settings

router = APIRouter(responses=errors(400, 401, 404, 413, 422, "5XX"))


def _request(body: ChatBody, conversation_id: str | None, settings: Settings) -> ChatRequest:
    max_chars = settings.max_message_chars
    if not body.message.strip():
        raise InvalidRequest("message must not be empty", code="empty_message")
    if len(body.message) > max_chars:
        raise InvalidRequest(
            f"message is {len(body.message)} characters long; the limit is {max_chars}",
            code="message_too_long",
        )
    if body.entreprise is not None:
        try:
            bounded_json(body.entreprise, settings.max_profile_chars)
        except ValueError as exc:
            raise InvalidRequest(f"entreprise: {exc}", code="invalid_profile") from None
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


@router.post("/chat", response_class=EventSourceResponse, responses=CHAT_STREAM)
async def chat(body: ChatBody, principal: ClientDep, services: ServicesDep) -> EventSourceResponse:
    run = await services.chat.open(principal.tenant, _request(body, None, services.settings))
    return event_stream(run.events())


@router.post("/chat/{conversation_id}/message", response_class=EventSourceResponse, responses=CHAT_STREAM)
async def chat_message(
    conversation_id: ConversationId, body: ChatBody, principal: ClientDep, services: ServicesDep
) -> EventSourceResponse:
    request = _request(body, conversation_id, services.settings)
    run = await services.chat.open(principal.tenant, request)
    return event_stream(run.events())


@router.get("/chat/{conversation_id}/messages")
async def messages(conversation_id: ConversationId, principal: ClientDep, services: ServicesDep) -> Messages:
    history = await services.conversations.history(principal.tenant, conversation_id)
    return Messages.model_validate({"items": [message.to_public() for message in history]})


# 409: the message is a question, or nothing was learned from the answer.
@router.post("/chat/{conversation_id}/messages/{message_id}/feedback", responses=errors(409))
async def feedback(
    conversation_id: ConversationId,
    message_id: Id,
    body: FeedbackBody,
    principal: ClientDep,
    services: ServicesDep,
) -> FeedbackOut:
    """`outcome`: `applied` (the entry changed), `proposed` (staff will decide: `proposal_id`) or
    `unchanged`; `status` is the entry's status after it. memory/proposal.py has the rule."""
    result = await services.conversations.feedback(
        principal.tenant, conversation_id, message_id, body.validated, body.corrected_answer, principal.actor
    )
    return FeedbackOut.model_validate(result.to_public())
