"""Agent identities and rules, from configuration (AGENTS_FILE) or the built-in default."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from memory_guard.core.errors import InvalidRequest

DEFAULT_AGENT = "default"

_DEFAULT_IDENTITY = (
    "Tu es l'assistant d'une équipe professionnelle francophone (gestion de projets de travaux "
    "publics, finance durable et ESG, développement logiciel)."
)
_DEFAULT_RULES = (
    "Réponds dans la langue de la question, de façon précise et professionnelle.",
    "Si tu ne sais pas, dis-le plutôt que d'inventer.",
    "Si tu as besoin d'informations sur l'entreprise, utilise le skill get_company_profile.",
    "Avant de répondre à une question déjà traitée, tu peux consulter la mémoire avec search_memory.",
)


@dataclass(frozen=True, slots=True)
class AgentProfile:
    name: str
    identity: str
    rules: tuple[str, ...] = field(default_factory=tuple)


class AgentDirectory:
    """Known agents. Without a configuration file any agent name is accepted with the default profile."""

    def __init__(self, profiles: dict[str, AgentProfile] | None = None) -> None:
        self._profiles = profiles
        self._default = AgentProfile(DEFAULT_AGENT, _DEFAULT_IDENTITY, _DEFAULT_RULES)

    @classmethod
    def from_file(cls, path: Path | None) -> AgentDirectory:
        if path is None:
            return cls()
        shape = "a JSON object of agent name -> {identity: str, rules: [str]}"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"AGENTS_FILE {path}: cannot be read as JSON ({exc})") from exc
        if not isinstance(raw, dict) or not raw:
            raise ValueError(f"AGENTS_FILE {path}: expected {shape}")
        profiles = {}
        for name, spec in raw.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("identity"), str):
                raise ValueError(f"AGENTS_FILE {path}: agent {name!r} has no identity; expected {shape}")
            rules = spec.get("rules", [])
            if not isinstance(rules, list):
                raise ValueError(f"AGENTS_FILE {path}: the rules of agent {name!r} must be a list")
            profiles[name] = AgentProfile(name, spec["identity"], tuple(str(r) for r in rules))
        return cls(profiles)

    def resolve(self, name: str | None) -> AgentProfile:
        agent = name or DEFAULT_AGENT
        if self._profiles is None:
            return AgentProfile(agent, self._default.identity, self._default.rules)
        if agent in self._profiles:
            return self._profiles[agent]
        if agent == DEFAULT_AGENT:
            return self._default
        known = ", ".join(sorted(self._profiles))
        raise InvalidRequest(f"unknown agent {agent!r}; configured agents: {known}", code="unknown_agent")
