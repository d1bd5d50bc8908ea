"""The tool-calling agent loop: stream a turn, run the requested skills, repeat."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from memory_guard.agent.events import Event, SkillResultEvent, SkillStartEvent, StatusEvent, TextEvent
from memory_guard.agent.reuse import USE_MEMORY_ANSWER, ReuseOffer
from memory_guard.agent.skills.base import SkillContext
from memory_guard.agent.skills.registry import SkillRegistry
from memory_guard.core.errors import MemoryGuardError, UpstreamTimeout
from memory_guard.ops.metrics import Metrics
from memory_guard.ops.request_context import note_tokens
from memory_guard.ops.tracing import child_span
from memory_guard.upstream.llm import ANSWER_CAP, ChatMessage, ChatModel, TextDelta, ToolCallRequest, TurnEnd

MAX_TOOL_RESULT_CHARS = 8000
DEFAULT_RUN_DEADLINE_S = 300.0


@dataclass(slots=True)
class LoopResult:
    """Filled in while the loop runs; complete once `run` has ended without raising."""

    final_text: str = ""
    full_text: str = ""
    truncated: bool = False
    company_specific: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    skills_used: list[str] = field(default_factory=list)
    # The entry whose stored answer the LLM chose to serve as it is (`use_memory_answer`): the
    # answer is that entry's, not generated.
    reused_entry_id: int | None = None


class AgentLoop:
    def __init__(
        self,
        *,
        model: ChatModel,
        registry: SkillRegistry,
        max_turns: int,
        metrics: Metrics,
        run_deadline_s: float = DEFAULT_RUN_DEADLINE_S,
    ) -> None:
        self.model = model
        self.registry = registry
        self._max_turns = max_turns
        self._metrics = metrics
        self._run_deadline_s = run_deadline_s

    async def run(
        self,
        messages: list[ChatMessage],
        context: SkillContext,
        result: LoopResult,
        reuse: ReuseOffer | None = None,
    ) -> AsyncIterator[Event]:
        """`reuse`: the grounding entries the LLM may answer with as they are (assisted runs only)."""
        tools = self.registry.tools()
        if reuse is not None and reuse.answers:
            tools.append(reuse.tool())
        # Every turn and skill of the run ends by this deadline, whatever each one's own.
        deadline = asyncio.get_running_loop().time() + self._run_deadline_s
        for _ in range(self._max_turns):
            turn_text: list[str] = []
            calls: list[ToolCallRequest] = []
            capped = False
            try:
                with child_span("llm.turn"):
                    async for item in self.model.stream(messages, tools, deadline=deadline):
                        if isinstance(item, TextDelta):
                            turn_text.append(item.text)
                            yield TextEvent(content=item.text)
                        elif isinstance(item, ToolCallRequest):
                            calls.append(item)
                        elif isinstance(item, TurnEnd):
                            self._count(item, result)
                            capped = item.finish_reason == ANSWER_CAP
            except MemoryGuardError:
                self._metrics.llm_calls.labels(outcome="error").inc()
                raise
            self._metrics.llm_calls.labels(outcome="ok").inc()
            text = "".join(turn_text)
            result.full_text += text
            if capped:
                yield StatusEvent(
                    content="Réponse tronquée : elle dépassait la longueur permise ; "
                    "elle ne sera pas mémorisée."
                )
            if not calls:
                result.final_text = text
                return
            messages.append(_assistant_turn(text, calls))
            yield StatusEvent(content="Exécution des outils…")
            async for event in self._run_skills(calls, messages, context, result, deadline, reuse):
                yield event
            if result.reused_entry_id is not None:
                return
        raise MemoryGuardError(
            f"the agent did not reach an answer within {self._max_turns} turns", code="agent_turn_limit"
        )

    def _count(self, end: TurnEnd, result: LoopResult) -> None:
        result.prompt_tokens += end.prompt_tokens
        result.completion_tokens += end.completion_tokens
        result.truncated = result.truncated or end.finish_reason in ("length", ANSWER_CAP)
        self._metrics.tokens.labels(kind="prompt").inc(end.prompt_tokens)
        self._metrics.tokens.labels(kind="completion").inc(end.completion_tokens)
        note_tokens(end.prompt_tokens, end.completion_tokens)

    async def _run_skills(
        self,
        calls: list[ToolCallRequest],
        messages: list[ChatMessage],
        context: SkillContext,
        result: LoopResult,
        deadline: float,
        reuse: ReuseOffer | None,
    ) -> AsyncIterator[Event]:
        for call in calls:
            yield SkillStartEvent(skill=call.name, params=_params_of(call.arguments))
            if call.name == USE_MEMORY_ANSWER and reuse is not None and reuse.answers:
                picked = reuse.pick(call.arguments)
                if isinstance(picked, int):
                    # The stored answer as it is, and no further turn: the calls after it are not run.
                    answer = reuse.answers[picked]
                    yield TextEvent(content=answer)
                    result.reused_entry_id = picked
                    result.final_text = answer
                    result.full_text += answer
                    result.skills_used.append(call.name)
                    return
                refused = json.dumps({"error": picked}, ensure_ascii=False)
                yield SkillResultEvent(skill=call.name, result_preview=refused)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": refused})
                continue
            try:
                async with asyncio.timeout_at(deadline):
                    outcome = await self.registry.execute(call.name, call.arguments, context)
            except TimeoutError:
                raise UpstreamTimeout("the answer was not ready within the time allowed") from None
            rendered = json.dumps(outcome.result, ensure_ascii=False, default=str)
            yield SkillResultEvent(skill=call.name, result_preview=rendered)
            result.skills_used.append(call.name)
            result.company_specific = result.company_specific or outcome.company_specific
            messages.append({"role": "tool", "tool_call_id": call.id, "content": _capped(rendered)})


def _capped(text: str) -> str:
    # Every turn resends the whole conversation: an oversized tool result would be paid many times.
    if len(text) <= MAX_TOOL_RESULT_CHARS:
        return text
    return (
        text[:MAX_TOOL_RESULT_CHARS] + f"… [tronqué : {len(text) - MAX_TOOL_RESULT_CHARS} caractères de plus]"
    )


def _params_of(arguments: str) -> object:
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return arguments


def _assistant_turn(text: str, calls: list[ToolCallRequest]) -> ChatMessage:
    return {
        "role": "assistant",
        "content": text or None,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ],
    }
