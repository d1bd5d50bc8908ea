"""A chat run: guard lookup, then a direct answer or the agent loop, then learning and history.

`open()` does every check that can fail before the stream starts, so that bad input
gets a 4xx instead of an `error` event. `ChatRun.events()` then yields the events of docs/API.md
and always ends with exactly one `done` or one `error`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory_guard.agent.events import (
    CachedResponseEvent,
    DoneEvent,
    ErrorEvent,
    Event,
    MemoryContextEvent,
    MemoryMatch,
    StatusEvent,
    Usage,
)
from memory_guard.agent.history import build_history
from memory_guard.agent.loop import AgentLoop, LoopResult
from memory_guard.agent.profiles import AgentDirectory, AgentProfile
from memory_guard.agent.prompt import Grounding, build_system_prompt
from memory_guard.agent.reuse import ReuseOffer
from memory_guard.agent.skills.base import SkillContext
from memory_guard.chat.learning_policy import CacheMode, Outcome, mentions_profile, skip_reason
from memory_guard.chat.request import NOT_RECORDED, ChatRequest
from memory_guard.conversations.service import ConversationService
from memory_guard.conversations.store import Exchange, Message, NewMessage
from memory_guard.core.clock import Clock
from memory_guard.core.decision import Decision
from memory_guard.core.errors import MemoryGuardError, UpstreamError
from memory_guard.core.scope import Scope
from memory_guard.db.bookkeeping import Bookkeeping
from memory_guard.memory.guard import Guard, GuardResult, completion_tokens_of, tokens_of
from memory_guard.memory.learning import LEARNING_ACTOR, Learner
from memory_guard.memory.lookups import ReusedLookup
from memory_guard.memory.standalone import stands_alone
from memory_guard.memory.variants import VariantService
from memory_guard.ops.request_context import note_decision, note_error, note_tokens_saved

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class _Plan:
    tenant: str
    request: ChatRequest
    scope: Scope
    profile: AgentProfile
    conversation_id: str
    history: list[Message]
    message_type: str
    standalone: bool
    received_at: datetime  # when the question came: its time in the history, before its answer's


class ChatService:
    def __init__(
        self,
        *,
        guard: Guard,
        learner: Learner,
        variants: VariantService,
        conversations: ConversationService,
        loop: AgentLoop,
        agents: AgentDirectory,
        history_messages: int,
        clock: Clock,
        bookkeeping: Bookkeeping,
        unit_of_work: Callable[[], AbstractAsyncContextManager[object]],
    ) -> None:
        self.guard = guard
        self.learner = learner
        self.variants = variants
        self.conversations = conversations
        self.loop = loop
        self.agents = agents
        self.history_messages = history_messages
        self.clock = clock
        self.bookkeeping = bookkeeping
        # One write transaction that the store calls inside it join (learning + history).
        self.unit_of_work = unit_of_work

    async def open(self, tenant: str, request: ChatRequest) -> ChatRun:
        profile = self.agents.resolve(request.agent)
        history: list[Message] = list(request.history)
        conversation_id = request.conversation_id
        if conversation_id is None:
            conversation_id = uuid.uuid4().hex
        else:
            history = await self._history(tenant, conversation_id)
        follow_up = request.type == "follow_up" or (request.type is None and bool(history))
        plan = _Plan(
            tenant=tenant,
            request=request,
            scope=Scope(tenant, profile.name, request.project or "", request.phase or ""),
            profile=profile,
            conversation_id=conversation_id,
            history=history,
            message_type=request.type or ("follow_up" if follow_up else "user_request"),
            standalone=not follow_up or stands_alone(request.message),
            received_at=self.clock(),
        )
        return ChatRun(self, plan)

    async def _history(self, tenant: str, conversation_id: str) -> list[Message]:
        """The conversation so far, its exchanges not yet written included: a follow-up is
        answered without waiting for the bookkeeping of the previous answer."""
        unwritten = self.bookkeeping.unwritten(Exchange)  # before the read
        return await self.conversations.history(tenant, conversation_id, unwritten)


class ChatRun:
    def __init__(self, service: ChatService, plan: _Plan) -> None:
        self._service = service
        self._plan = plan
        self._found: GuardResult | None = None
        self._memory_unavailable = False
        # Why the run ended with an `error` event, for a transport that answers with a status.
        self.failure: MemoryGuardError | None = None

    async def decide(self) -> GuardResult:
        """The guard's decision, looked up once: it is known before the LLM runs, so that a
        transport can announce it before the answer's first byte."""
        if self._found is None:
            found = GuardResult(Decision.MISS)
            if self._plan.request.cache.looks_up:
                try:
                    found = await self._service.guard.lookup(
                        self._plan.scope, self._plan.request.message, allow_direct=self._plan.standalone
                    )
                except UpstreamError as exc:
                    # The embeddings endpoint is down: answer without memory rather than not at all.
                    logger.warning("memory lookup unavailable, answering without it: %s", exc.message)
                    self._memory_unavailable = True
            self._found = found
            shown = found.served or found.best
            verification = shown.verification if shown is not None else None
            note_decision(
                found.decision.value,
                shown.score if shown is not None else None,
                verification.verdict.value if verification is not None else None,
            )
        return self._found

    async def events(self) -> AsyncIterator[Event]:
        # The run's end is logged by the request's access line (ops/request_log.py), from the facts
        # noted here and on the way: decision, score, verdict, tokens, error.
        try:
            async for event in self._events():
                yield event
        except MemoryGuardError as exc:
            self.failure = exc
            note_error(exc.code)
            yield ErrorEvent(code=exc.code, message=exc.message)
        except Exception:
            logger.exception("chat run failed")
            note_error("internal_error")
            yield ErrorEvent(code="internal_error", message="the run failed on our side; it has been logged")

    async def _events(self) -> AsyncIterator[Event]:
        plan = self._plan
        guard = self._service.guard
        found = await self.decide()
        if self._memory_unavailable:
            yield StatusEvent(content="Mémoire indisponible : réponse sans elle.")
        if found.served is not None:
            for event in await self._serve_from_memory(found):
                yield event
            return
        grounding: list[Grounding] = []
        reuse: ReuseOffer | None = None
        if found.decision is Decision.ASSISTED:
            matches = guard.policy.grounding(found.candidates)
            grounding = [Grounding(c.entry.id, c.entry.question, c.entry.answer, c.score) for c in matches]
            reuse = ReuseOffer({c.entry.id: c.entry.answer for c in matches})
            yield MemoryContextEvent(
                entries=[MemoryMatch(entry_id=c.entry.id, score=round(c.score, 4)) for c in matches]
            )
        result = LoopResult()
        context = SkillContext(plan.scope, plan.request.entreprise, guard)
        async for event in self._service.loop.run(self._messages(grounding), context, result, reuse):
            yield event
        # The answer is complete: learning (entry or wording, + audit) and history are one
        # transaction, written together or not at all, even if the client disconnects meanwhile.
        if result.reused_entry_id is not None:
            yield await asyncio.shield(self._finish_reuse(found, result, result.reused_entry_id))
        else:
            yield await asyncio.shield(self._finish(found, result))

    def _messages(self, grounding: list[Grounding]) -> list[dict[str, Any]]:
        plan = self._plan
        history = build_history(plan.history, self._service.history_messages)
        system = build_system_prompt(
            plan.profile, plan.request.entreprise, self._service.loop.registry, grounding, history.summary
        )
        return [
            {"role": "system", "content": system},
            *history.recent,
            {"role": "user", "content": plan.request.message},
        ]

    async def _serve_from_memory(self, found: GuardResult) -> tuple[Event, Event]:
        """The answer from memory; its history is queued, written after it (see Bookkeeping)."""
        served = found.served
        assert served is not None
        entry = served.entry
        answer_id = await self._queue_exchange(found) if self._plan.request.record else NOT_RECORDED
        note_tokens_saved(tokens_of(entry))
        cached = CachedResponseEvent(
            answer=entry.answer,
            score=round(served.score, 4),
            entry_id=entry.id,
            matched_question=served.wording,  # the entry's question, or the variant that matched
            status=entry.status,
        )
        return cached, self._done(answer_id, Decision.DIRECT, None, 0, 0)

    async def _queue_exchange(self, found: GuardResult) -> int:
        """Queue the direct answer's exchange for the bookkeeping; the answer's message id."""
        plan, served = self._plan, found.served
        assert served is not None
        exchange = Exchange(
            plan.tenant,
            plan.conversation_id,
            NewMessage("user", plan.message_type, plan.request.message, created_at=plan.received_at),
            NewMessage(
                "assistant",
                "cached_response",
                served.entry.answer,
                entry_id=served.entry.id,
                metadata={
                    "score": served.score,
                    "served_entry_id": served.entry.id,
                    "lookup_id": found.lookup_id,
                    # The wording it was served through: feedback confirms or removes a learned one.
                    **({"variant_id": served.variant.id} if served.variant is not None else {}),
                },
            ),
            self._service.conversations.reserve_ids(),
            self._service.clock(),
        )
        # Shielded: once the ids are given out, the exchange is queued even if the client leaves.
        await asyncio.shield(self._service.bookkeeping.put(exchange))
        return exchange.ids[1]

    def _outcome(self, result: LoopResult) -> Outcome:
        request = self._plan.request
        return Outcome(
            answer=result.final_text,
            truncated=result.truncated,
            cache=request.cache,
            standalone=self._plan.standalone,
            company_specific=result.company_specific
            or mentions_profile(result.final_text, request.entreprise),
        )

    async def _finish_reuse(self, found: GuardResult, result: LoopResult, entry_id: int) -> DoneEvent:
        """The LLM answered with a grounding entry's stored answer as it is. Nothing is learned as
        an entry; the question's wording becomes a `learned` variant of that entry when the
        learning policy would have learned an answer to it and no entry or variant of the scope
        holds that wording already."""
        plan, service = self._plan, self._service
        request = plan.request
        reason = skip_reason(self._outcome(result))
        vector = found.vector
        if reason is None and vector is None:
            reason = "wording_held"  # matched exactly: the wording is held already
        variant_id: int | None = None
        learning = (
            service.learner.learning_lock(plan.scope, request.message) if reason is None else nullcontext()
        )
        async with learning, service.unit_of_work():
            if reason is None:
                assert vector is not None
                variant, reason = await service.variants.learn(
                    plan.scope, entry_id, request.message, vector, LEARNING_ACTOR
                )
                variant_id = variant.id if variant is not None else None
            metadata: dict[str, Any] = {"reused_entry_id": entry_id}
            metadata.update({"variant_id": variant_id} if variant_id else {"variant_not_learned": reason})
            answer_id = NOT_RECORDED
            if request.record:
                _, answer_id = await service.conversations.record_exchange(
                    plan.tenant,
                    plan.conversation_id,
                    NewMessage("user", plan.message_type, request.message, created_at=plan.received_at),
                    NewMessage(
                        "assistant", "response", result.full_text, entry_id=entry_id, metadata=metadata
                    ),
                    service.clock(),
                )
        reused = next(c.entry for c in found.candidates if c.entry.id == entry_id)
        if found.lookup_id is not None:
            # What generating the answer cost when it was learned, less the pick's own completion.
            saved = max(0, completion_tokens_of(reused) - result.completion_tokens)
            await service.bookkeeping.put(ReusedLookup(found.lookup_id, plan.tenant, entry_id, saved))
            note_tokens_saved(saved)
        usage = (result.prompt_tokens, result.completion_tokens)
        return self._done(
            answer_id, found.decision, None, *usage, reused=entry_id, learned_variant=variant_id
        )

    async def _finish(self, found: GuardResult, result: LoopResult) -> DoneEvent:
        plan = self._plan
        request = plan.request
        reason = skip_reason(self._outcome(result))
        vector = found.vector
        if reason is None and vector is None:
            # Embedded before the write transaction: nothing slow may run while it holds the writer.
            try:
                vector = await self._service.guard.embed(request.message)
            except UpstreamError as exc:
                logger.warning("answer not learned, embeddings unavailable: %s", exc.message)
                reason = "embedding_unavailable"
        entry_id: int | None = None
        learner = self._service.learner
        # The question's learning lock before the writer, the order every writer takes them in.
        learning = learner.learning_lock(plan.scope, request.message) if reason is None else nullcontext()
        async with learning, self._service.unit_of_work():
            if reason is None:
                entry, reason = await learner.learn(
                    plan.scope,
                    request.message,
                    result.final_text,
                    self._metadata(result),
                    vector,
                    replace=request.cache is CacheMode.REFRESH,
                )
                entry_id = entry.id if entry else None
            answer_id = NOT_RECORDED
            if request.record:
                _, answer_id = await self._service.conversations.record_exchange(
                    plan.tenant,
                    plan.conversation_id,
                    NewMessage("user", plan.message_type, request.message, created_at=plan.received_at),
                    NewMessage(
                        "assistant",
                        "response",
                        result.full_text,
                        entry_id=entry_id,
                        metadata={"not_learned": reason} if reason else {},
                    ),
                    self._service.clock(),
                )
        return self._done(answer_id, found.decision, entry_id, result.prompt_tokens, result.completion_tokens)

    def _metadata(self, result: LoopResult) -> dict[str, Any]:
        plan = self._plan
        return {
            "agent": plan.scope.agent,
            "project": plan.scope.project,
            "phase": plan.scope.phase,
            "model": self._service.loop.model.model,
            "usage": {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens},
            "skills": result.skills_used,
            "conversation_id": plan.conversation_id,
        }

    def _done(
        self,
        message_id: int,
        decision: Decision,
        entry_id: int | None,
        prompt: int,
        completion: int,
        reused: int | None = None,
        learned_variant: int | None = None,
    ) -> DoneEvent:
        return DoneEvent(
            conversation_id=self._plan.conversation_id,
            message_id=message_id,
            decision=decision,
            learned_entry_id=entry_id,
            reused_entry_id=reused,
            learned_variant_id=learned_variant,
            usage=Usage(prompt_tokens=prompt, completion_tokens=completion),
        )
