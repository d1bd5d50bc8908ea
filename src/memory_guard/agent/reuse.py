"""`use_memory_answer`: the LLM answers by reusing one of the memory entries it was given.

Offered only on an assisted run, for the entries of that run's grounding and no other: the
offer is the only place the loop learns which ids it may accept, so an id the LLM makes up, or
one of another tenant or scope, is refused to it as a tool error and the run goes on. A valid
pick ends the run: the stored answer is streamed as it is, with no further generated token.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from memory_guard.upstream.llm import ToolSchema

USE_MEMORY_ANSWER = "use_memory_answer"

DESCRIPTION = (
    "Appelle cet outil quand l'une des réponses déjà connues données plus haut répond telle quelle "
    "à la question posée : sa réponse enregistrée est alors envoyée à l'utilisateur mot pour mot, "
    "sans que tu l'écrives. Ne l'appelle pas si elle ne répond qu'en partie, à une autre question, "
    "ou si la conversation demande une réponse adaptée."
)


@dataclass(frozen=True, slots=True)
class ReuseOffer:
    """The entries of one run's grounding the LLM may reuse: entry id -> stored answer."""

    answers: Mapping[int, str]

    def tool(self) -> ToolSchema:
        # The ids are listed in the schema too: a model that honours `enum` cannot pick another.
        ids = sorted(self.answers)
        return {
            "type": "function",
            "function": {
                "name": USE_MEMORY_ANSWER,
                "description": DESCRIPTION,
                "parameters": {
                    "type": "object",
                    "properties": {
                        "entry_id": {
                            "type": "integer",
                            "enum": ids,
                            "description": "L'identifiant de l'entrée dont la réponse convient.",
                        }
                    },
                    "required": ["entry_id"],
                    "additionalProperties": False,
                },
            },
        }

    def pick(self, arguments: str) -> int | str:
        """The entry id the call names, or why it is refused (for the LLM to read)."""
        try:
            raw = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return "arguments are not valid JSON"
        entry_id = raw.get("entry_id") if isinstance(raw, dict) else None
        if isinstance(entry_id, str) and entry_id.strip().isdigit():
            entry_id = int(entry_id)  # some models quote integers
        if isinstance(entry_id, bool) or not isinstance(entry_id, int):
            return "entry_id must be the integer id of one of the entries given"
        if entry_id not in self.answers:
            offered = ", ".join(str(i) for i in sorted(self.answers))
            return f"entry {entry_id} is not one of the entries given for this question ({offered})"
        return entry_id
