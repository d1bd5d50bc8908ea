"""The skill seam: a tool the LLM may call, with a typed input and a declared reach."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import BaseModel

from memory_guard.core.scope import Scope

if TYPE_CHECKING:
    from memory_guard.memory.guard import Guard


@dataclass(frozen=True, slots=True)
class SkillContext:
    """What a skill may see of the request it serves."""

    scope: Scope
    entreprise: dict[str, Any] | None
    guard: Guard


class Skill(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    # True when the result describes one company or user: an answer built on it must
    # never be learned into a scope shared beyond that company.
    company_specific: ClassVar[bool]

    async def run(self, params: Any, context: SkillContext) -> Any: ...
