"""The agent loop on a scripted ChatModel: turns, skills, flags for the learning policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_guard.agent.events import Event, SkillStartEvent
from memory_guard.agent.loop import AgentLoop, LoopResult
from memory_guard.agent.skills import builtin_registry
from memory_guard.agent.skills.base import SkillContext
from memory_guard.core.errors import MemoryGuardError
from memory_guard.core.scope import Scope
from memory_guard.embeddings.hashing import HashingEmbedder
from memory_guard.ops.metrics import Metrics
from memory_guard.services import Services
from memory_guard.settings import Settings
from memory_guard.upstream.llm import TextDelta, ToolCallRequest, TurnEnd
from tests.fakes import ScriptedChatModel

SCOPE = Scope("acme", "default")


async def _run(
    model: ScriptedChatModel, tmp_path: Path, entreprise: dict[str, Any] | None = None, max_turns: int = 10
) -> tuple[list[Event], LoopResult]:
    settings = Settings(_env_file=None, memory_db_path=tmp_path / "m.db")  # type: ignore[call-arg]
    services = await Services.open(settings, embedder=HashingEmbedder(), chat_model=model)
    try:
        loop = AgentLoop(model=model, registry=builtin_registry(), max_turns=max_turns, metrics=Metrics())
        result = LoopResult()
        context = SkillContext(SCOPE, entreprise, services.guard)
        events = [e async for e in loop.run([{"role": "user", "content": "q"}], context, result)]
        return events, result
    finally:
        await services.aclose()


async def test_text_turn_completes(tmp_path: Path) -> None:
    model = ScriptedChatModel([[TextDelta("Bon"), TextDelta("jour"), TurnEnd("stop", 10, 2)]])
    events, result = await _run(model, tmp_path)
    assert [e.model_dump(mode="json") for e in events] == [
        {"type": "text", "content": "Bon"},
        {"type": "text", "content": "jour"},
    ]
    assert result.final_text == "Bonjour"
    assert (result.prompt_tokens, result.completion_tokens, result.truncated) == (10, 2, False)


async def test_length_finish_marks_truncation(tmp_path: Path) -> None:
    model = ScriptedChatModel([[TextDelta("Le délai"), TurnEnd("length", 5, 4096)]])
    _, result = await _run(model, tmp_path)
    assert result.truncated


async def test_company_skill_marks_the_answer_company_specific(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        [
            [ToolCallRequest("c1", "get_company_profile", ""), TurnEnd("tool_calls")],
            [TextDelta("Réponse."), TurnEnd("stop")],
        ]
    )
    events, result = await _run(model, tmp_path, entreprise={"nom": "Sahel Agro"})
    assert [e.type for e in events] == ["status", "skill_start", "skill_result", "text"]
    assert result.company_specific
    assert result.skills_used == ["get_company_profile"]
    tool_message = model.sent[1][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "c1"
    assert json.loads(tool_message["content"]) == {"nom": "Sahel Agro"}


async def test_search_memory_is_not_company_specific(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        [
            [ToolCallRequest("c1", "search_memory", '{"query": "garantie"}'), TurnEnd("tool_calls")],
            [TextDelta("Rien."), TurnEnd("stop")],
        ]
    )
    _, result = await _run(model, tmp_path)
    assert not result.company_specific
    assert json.loads(model.sent[1][-1]["content"]) == []


async def test_unknown_skill_and_bad_json_go_back_to_the_llm(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        [
            [
                ToolCallRequest("c1", "launch_rockets", "{}"),
                ToolCallRequest("c2", "search_memory", "{oops"),
                TurnEnd("tool_calls"),
            ],
            [TextDelta("Désolé."), TurnEnd("stop")],
        ]
    )
    events, result = await _run(model, tmp_path)
    assert result.final_text == "Désolé."
    results = [json.loads(m["content"]) for m in model.sent[1] if m["role"] == "tool"]
    assert results == [{"error": "unknown skill 'launch_rockets'"}, {"error": "arguments are not valid JSON"}]
    assert [e.params for e in events if isinstance(e, SkillStartEvent)] == [{}, "{oops"]


async def test_turn_limit(tmp_path: Path) -> None:
    call = [ToolCallRequest("c", "search_memory", '{"query": "x"}'), TurnEnd("tool_calls")]
    model = ScriptedChatModel([call, call])
    with pytest.raises(MemoryGuardError, match="2 turns"):
        await _run(model, tmp_path, max_turns=2)


def test_tool_schemas_come_from_typed_inputs() -> None:
    tools = {t["function"]["name"]: t["function"] for t in builtin_registry().tools()}
    search = tools["search_memory"]["parameters"]
    assert search["required"] == ["query"]
    assert search["properties"]["limit"]["maximum"] == 10
    assert tools["get_company_profile"]["parameters"]["properties"] == {}


async def test_oversized_tool_results_are_capped(tmp_path: Path) -> None:
    from memory_guard.agent.loop import MAX_TOOL_RESULT_CHARS

    model = ScriptedChatModel(
        [
            [ToolCallRequest("c1", "get_company_profile", ""), TurnEnd("tool_calls")],
            [TextDelta("ok"), TurnEnd("stop")],
        ]
    )
    await _run(model, tmp_path, entreprise={"rapport": "x" * 50_000})
    content = model.sent[1][-1]["content"]
    assert len(content) < MAX_TOOL_RESULT_CHARS + 100
    assert content.endswith("caractères de plus]")
