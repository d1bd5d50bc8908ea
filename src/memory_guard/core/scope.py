"""Where a memory entry lives: a tenant, an agent, and optionally a project and a phase."""

from __future__ import annotations

from dataclasses import dataclass

from memory_guard.core.normalize import key_hash


@dataclass(frozen=True, slots=True)
class Scope:
    """Where an entry lives. An empty project or phase matches only empty."""

    tenant: str
    agent: str
    project: str = ""
    phase: str = ""

    def key(self, question: str) -> str:
        """The exact-match key of a question in this scope."""
        return key_hash(self.tenant, self.agent, self.project, self.phase, question)
