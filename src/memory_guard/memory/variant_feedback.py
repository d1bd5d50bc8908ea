"""What a client's feedback does to the question variant an answer was served through.

THE RULE (the one place it is decided; `variant_effect` applies it):

An answer is served through a variant when the variant's wording matched (`direct`), or when the
LLM chose a grounding entry's answer for a question whose wording then became a `learned`
variant of that entry (`use_memory_answer`). Either way someone paired that wording with that
answer, and the client's word is about the pairing:

- a "yes" (validated, no correction) on a `learned` variant is one more, independent
  confirmation of the wording (counted up to `CONFIRMED`, where it serves by vector too); the
  entry's own rule (memory/proposal.py) applies as well: a client may ask to validate the entry,
  not grant it;
- a "no" on a `learned` variant removes the variant (audited `reject_variant`: the action says
  why), and leaves the entry as it is: the answer was given to another wording than its own
  question, so the pairing is what was wrong. Like retiring an `auto` entry, this can only make
  the service answer less from memory, never serve a wrong answer;
- a correction removes a `learned` variant the same way, and the entry's rule makes it a
  proposal, as any correction;
- a `validated` variant serves as the entry's question does: the entry's rule alone applies;
- a variant removed since the answer: a "no" changes nothing more (the pairing is gone, the entry
  was not what was asked); a "yes" or a correction goes to the entry's rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memory_guard.memory.variant import Variant, VariantStatus

VariantOutcome = Literal["confirmed", "removed", "unchanged"]


@dataclass(frozen=True, slots=True)
class VariantEffect:
    act: Literal["confirm", "remove"] | None  # what to do to the variant
    entry_rule: bool  # whether the entry's own rule (memory/proposal.py) applies too


def variant_effect(variant: Variant | None, validated: bool, corrected: str | None) -> VariantEffect:
    """The effect on an answer served through a variant that is now `variant` (None: removed since)."""
    right = validated and corrected is None
    if variant is None:
        return VariantEffect(None, entry_rule=validated or corrected is not None)
    if variant.status is not VariantStatus.LEARNED:
        return VariantEffect(None, entry_rule=True)
    if right:
        return VariantEffect("confirm", entry_rule=True)
    return VariantEffect("remove", entry_rule=corrected is not None)
