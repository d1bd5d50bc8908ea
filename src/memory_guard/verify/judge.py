"""The seam of the optional LLM judge, asked about the candidates the offline verifier is unsure of."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

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
    """One verdict of the judge, kept with what it cost."""

    serves: bool
    reason: str
    model: str
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class JudgeTotals:
    calls: int
    prompt_tokens: int
    completion_tokens: int


class JudgementStore(Protocol):
    """The judge's verdicts per (entry, question); the keys are hashes of the texts judged."""

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
        now: datetime,
    ) -> None: ...

    async def totals(self, tenant: str) -> JudgeTotals: ...
