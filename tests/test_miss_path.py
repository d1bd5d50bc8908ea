"""What a miss does before its first token that it need not (issue 11: time to first token).

No timing here (bench/load.py --figures c measures it): each test pins down one piece of
per-request work that was removed, so that it does not come back unnoticed.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, ClassVar

import openai.resources.chat.completions.completions as sdk_completions
import pytest
from openai import omit
from pydantic import BaseModel

from memory_guard.agent.skills.base import SkillContext
from memory_guard.agent.skills.registry import SkillRegistry
from memory_guard.api import auth, deps
from memory_guard.upstream.openai_chat import OpenAIChatModel
from tests.upstream import FakeUpstream, Reply

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "Tu réponds aux questions."},
    {"role": "user", "content": "Quel est le délai de paiement ?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"found": []}'},
]


class _Counted(BaseModel):
    """An input model that counts how often its JSON schema is generated."""

    generated: ClassVar[int] = 0
    query: str

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        _Counted.generated += 1
        return super().model_json_schema(*args, **kwargs)


class _Lookup:
    name: ClassVar[str] = "lookup"
    description: ClassVar[str] = "Looks something up."
    input_model: ClassVar[type[BaseModel]] = _Counted
    company_specific: ClassVar[bool] = False

    async def run(self, params: Any, context: SkillContext) -> Any:
        return {"found": []}


class _Other(_Lookup):
    name: ClassVar[str] = "other"


def test_tool_schemas_are_generated_once_not_per_turn() -> None:
    _Counted.generated = 0
    registry = SkillRegistry([_Lookup()])
    first = registry.tools()
    first.clear()  # a caller's list is its own
    assert registry.tools() == registry.tools()
    assert [t["function"]["name"] for t in registry.tools()] == ["lookup"]
    assert _Counted.generated == 1
    registry.register(_Other())  # a skill registered later is offered too
    assert [t["function"]["name"] for t in registry.tools()] == ["lookup", "other"]


async def test_a_turn_sends_messages_and_tools_as_built_without_the_sdk_walking_them(
    fresh_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    walked: list[Any] = []
    transform = sdk_completions.async_maybe_transform

    async def spy(data: Any, expected_type: Any) -> Any:
        walked.append(data)
        return await transform(data, expected_type)

    monkeypatch.setattr(sdk_completions, "async_maybe_transform", spy)
    fresh_upstream.push(Reply(text="Trente jours."))
    tools = SkillRegistry([_Lookup()]).tools()
    model = OpenAIChatModel(
        base_url=fresh_upstream.base_url,
        api_key="sk-test",
        model="test-model",
        max_tokens=64,
        timeout_s=2.0,
        max_retries=0,
        referer="http://test",
        title="test",
    )
    try:
        items = [item async for item in model.stream([dict(m) for m in MESSAGES], tools)]
    finally:
        await model.aclose()
    assert items
    sent = fresh_upstream.requests[-1].body
    assert sent["messages"] == MESSAGES
    assert sent["tools"] == tools
    assert sent["model"] == "test-model" and sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True} and sent["max_tokens"] == 64
    # The SDK's key-by-key walk of the parameters saw neither the messages nor the tool schemas.
    assert walked and all(not list(data["messages"]) and data["tools"] is omit for data in walked)


@pytest.mark.parametrize("dependency", [auth.client, auth.staff, auth.metrics_reader, deps.services])
def test_request_dependencies_run_on_the_event_loop(dependency: Any) -> None:
    # FastAPI runs a plain `def` dependency in its thread pool: a round trip through another
    # thread on every request, chat turns included, for microseconds of work. The key schemes are
    # objects: FastAPI looks at their `__call__`.
    call = dependency if inspect.isfunction(dependency) else dependency.__call__
    assert inspect.iscoroutinefunction(call)
    assert asyncio.iscoroutinefunction(call)
