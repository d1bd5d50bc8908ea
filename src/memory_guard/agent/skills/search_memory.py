"""search_memory: the LLM looks up the memory of its own scope."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field

from memory_guard.agent.skills.base import SkillContext

# Below this the stored question is about something else; returning it would only add noise.
MIN_SCORE = 0.5


class SearchMemoryInput(BaseModel):
    query: str = Field(min_length=1, max_length=2000, description="The question to look up.")
    limit: int = Field(default=3, ge=1, le=10, description="How many entries at most.")


class SearchMemory:
    name: ClassVar[str] = "search_memory"
    description: ClassVar[str] = (
        "Cherche dans la mémoire de ce contexte (agent, projet, phase) les réponses déjà données, "
        "apprises automatiquement (status auto) ou validées par l'équipe (status validated), "
        "hors réponses retirées ou expirées. Renvoie les questions proches avec leur réponse, "
        "un score et leur statut."
    )
    input_model: ClassVar[type[BaseModel]] = SearchMemoryInput
    company_specific: ClassVar[bool] = False

    async def run(self, params: SearchMemoryInput, context: SkillContext) -> Any:
        result = await context.guard.inspect(context.scope, params.query, allow_direct=False, k=params.limit)
        return [
            {
                "question": c.entry.question,
                "answer": c.entry.answer,
                "score": round(c.score, 4),
                "status": c.entry.status.value,
            }
            for c in result.candidates
            if c.score >= MIN_SCORE
        ]
