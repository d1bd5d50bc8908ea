"""Built-in skills."""

from __future__ import annotations

from memory_guard.agent.skills.company_profile import GetCompanyProfile
from memory_guard.agent.skills.registry import SkillRegistry
from memory_guard.agent.skills.search_memory import SearchMemory


def builtin_registry() -> SkillRegistry:
    return SkillRegistry([SearchMemory(), GetCompanyProfile()])
