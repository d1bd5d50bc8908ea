"""The system prompt, assembled per request: identity, company, skills, grounding."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memory_guard.agent.profiles import AgentProfile
from memory_guard.agent.reuse import USE_MEMORY_ANSWER
from memory_guard.agent.skills.base import Skill
from memory_guard.core.shorten import shorten

# Profiles come from clients: cap what one may add to every prompt.
_PROFILE_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Grounding:
    """A close match from memory, given to the LLM on an assisted decision."""

    entry_id: int
    question: str
    answer: str
    score: float


def build_system_prompt(
    profile: AgentProfile,
    entreprise: dict[str, Any] | None,
    skills: Iterable[Skill],
    grounding: Sequence[Grounding] = (),
    summary: str | None = None,
) -> str:
    parts = [profile.identity]
    if profile.rules:
        parts.append("## Règles\n" + "\n".join(f"- {rule}" for rule in profile.rules))
    if entreprise:
        parts.append("## Entreprise actuelle\n" + _profile_text(entreprise))
    skill_lines = [f"- **{skill.name}** : {skill.description}" for skill in skills]
    if skill_lines:
        parts.append("## Tes outils (skills)\nUtilise-les quand c'est pertinent :\n" + "\n".join(skill_lines))
    if grounding:
        lines = [
            f"### Entrée {g.entry_id} : question proche (similarité {g.score:.2f})\n{g.question}\n"
            f"### Réponse enregistrée\n{g.answer}"
            for g in grounding
        ]
        parts.append(
            "## Réponses déjà connues sur des questions proches\n"
            "Appuie-toi dessus si elles répondent vraiment à la question posée ; sinon ignore-les. "
            f"Si l'une y répond telle quelle, appelle `{USE_MEMORY_ANSWER}` avec son numéro d'entrée "
            "plutôt que de la réécrire.\n\n" + "\n\n".join(lines)
        )
    if summary:
        parts.append("## Résumé des échanges plus anciens\n" + summary)
    return "\n\n".join(parts)


def _profile_text(entreprise: dict[str, Any]) -> str:
    lines = []
    for key, value in entreprise.items():
        rendered = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"- {key} : {rendered}")
    text = "\n".join(lines)
    return shorten(text, _PROFILE_CHARS)
