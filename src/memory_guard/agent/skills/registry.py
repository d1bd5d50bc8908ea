"""The skills registry: tool schemas for the LLM, and safe execution of its calls."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from memory_guard.agent.skills.base import Skill, SkillContext
from memory_guard.core.field_errors import describe_field_errors
from memory_guard.upstream.llm import ToolSchema

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SkillOutcome:
    result: Any
    company_specific: bool


class SkillRegistry:
    def __init__(self, skills: list[Skill] | None = None) -> None:
        self._skills: dict[str, Skill] = {}
        self._tools: list[ToolSchema] | None = None
        for skill in skills or []:
            self.register(skill)

    def register(self, skill: Skill) -> None:
        if skill.name in self._skills:
            raise ValueError(f"a skill named {skill.name!r} is already registered")
        self._skills[skill.name] = skill
        self._tools = None

    def __iter__(self) -> Iterator[Skill]:
        return iter(self._skills.values())

    def tools(self) -> list[ToolSchema]:
        """OpenAI tool definitions, each schema generated from the skill's typed input.

        Generated once, not per turn: pydantic's schema generation costs more than the rest of
        a turn's request building. Callers get their own list and must not change the schemas."""
        if self._tools is None:
            self._tools = [
                {
                    "type": "function",
                    "function": {
                        "name": skill.name,
                        "description": skill.description,
                        "parameters": skill.input_model.model_json_schema(),
                    },
                }
                for skill in self._skills.values()
            ]
        return list(self._tools)

    async def execute(self, name: str, arguments: str, context: SkillContext) -> SkillOutcome:
        """Run one call. A bad call becomes an error result for the LLM to read, not a failed run."""
        skill = self._skills.get(name)
        if skill is None:
            return SkillOutcome({"error": f"unknown skill {name!r}"}, company_specific=False)
        try:
            raw = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return SkillOutcome({"error": "arguments are not valid JSON"}, False)
        try:
            params = skill.input_model.model_validate(raw)
        except ValidationError as exc:
            problems = describe_field_errors(exc.errors(), unnamed="arguments")
            return SkillOutcome({"error": f"invalid arguments: {problems}"}, False)
        try:
            result = await skill.run(params, context)
        except Exception:
            logger.exception("skill %s failed", name)
            return SkillOutcome({"error": f"the skill {name} failed"}, skill.company_specific)
        return SkillOutcome(result, skill.company_specific)
