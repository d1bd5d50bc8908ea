"""get_company_profile: the profile of the company the request is made for."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from memory_guard.agent.skills.base import SkillContext


class NoInput(BaseModel):
    pass


class GetCompanyProfile:
    name: ClassVar[str] = "get_company_profile"
    description: ClassVar[str] = (
        "Renvoie le profil de l'entreprise de l'utilisateur (secteur, pays, effectifs, chiffre "
        "d'affaires, pratiques et objectifs déclarés) quand la requête en fournit un."
    )
    input_model: ClassVar[type[BaseModel]] = NoInput
    company_specific: ClassVar[bool] = True

    async def run(self, params: NoInput, context: SkillContext) -> Any:
        if context.entreprise is None:
            return {"error": "aucun profil d'entreprise n'accompagne cette requête"}
        return context.entreprise
