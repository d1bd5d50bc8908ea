"""The seam of the LLM judge, asked about the candidates the offline verifier is unsure of."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from memory_guard.core.verdict import Verification


class StoredAnswer(Protocol):
    @property
    def id(self) -> int: ...

    @property
    def question(self) -> str: ...

    @property
    def answer(self) -> str: ...


class HitJudge(Protocol):
    async def judge(
        self, tenant: str, stored: StoredAnswer, question: str, *, call: bool
    ) -> Verification | None:
        """The verdict on serving `stored` for `question`, by="judge".

        A verdict cached for this (entry, question) comes back with no call; otherwise the
        judge is asked only when `call` is true. None when there is no verdict (no call
        allowed, or the judge failed: the candidate then stays unsure).
        """
        ...


@dataclass(frozen=True, slots=True)
class Judgement:
    """One verdict of the judge, cached per (entry, question)."""

    serves: bool
    reason: str


# What one call to the judge's model came to: a verdict, a reply that was neither YES nor NO (or
# was cut), or a failure with no reply (an error, a timeout), whose tokens and cost are unknown.
JudgeOutcome = Literal["yes", "no", "unclear", "failed"]


@dataclass(frozen=True, slots=True)
class JudgeCall:
    """One request to the judge's model, counted whatever it gave, with what it cost."""

    model: str
    outcome: JudgeOutcome
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None  # the upstream's own figure, when it sends one


@dataclass(frozen=True, slots=True)
class JudgeTotals:
    """A tenant's calls to the judge. The calls that answered (not failed) and whose cost the
    upstream did not report are `unpriced`: priced by the settings, if they name a price."""

    calls: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    reported_cost: float  # the sum of the costs the upstream reported
    unpriced_calls: int = 0
    unpriced_prompt_tokens: int = 0
    unpriced_completion_tokens: int = 0


class JudgementStore(Protocol):
    """The judge's verdicts per (entry, question), the keys being hashes of the texts judged, and
    the ledger of its calls."""

    async def get(
        self, tenant: str, entry_id: int, entry_key: str, question_key: str
    ) -> Judgement | None: ...

    async def put(
        self,
        tenant: str,
        entry_id: int,
        entry_key: str,
        question_key: str,
        judgement: Judgement,
        call: JudgeCall,
        now: datetime,
    ) -> None:
        """Cache the verdict and count the call that gave it, together."""
        ...

    async def count(self, tenant: str, call: JudgeCall, now: datetime) -> None:
        """Count a call that gave no verdict."""
        ...

    async def totals(self, tenant: str) -> JudgeTotals: ...
