"""What every response model shares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# An actor as the staff page words it (core/actor.py): a code for what the service itself writes,
# "key" for an API key named by its digest, none for a person's own name.
ACTOR_CODE = Field(
    description="learning, auto_prune, judge, client_feedback, client, key, or null for a name"
)
ACTOR_PARAMS = Field(description='for "key": its role and digest')
# A verifier reason as a stable code with the words it quotes (core/verdict_reasons.py).
REASON_CODE = Field(description="the reason's kind, for a reader in another language; null without one")
REASON_PARAMS = Field(description="the words the reason quotes, by name")
MOMENT = "ISO 8601, UTC"


class ResponseModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
