"""What the memory holds and what it saved: the figures of `GET /staff/memory/stats`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, timedelta
from typing import Any

from memory_guard.core.clock import Clock
from memory_guard.core.decision import DECISIONS, Decision
from memory_guard.hits.service import HitService
from memory_guard.memory.store import LookupLog, MemoryStore
from memory_guard.verify.judge import JudgementStore, JudgeTotals
from memory_guard.verify.judge_switch import JudgeSwitch


@dataclass(frozen=True, slots=True)
class Price:
    """What the upstream charges for 1,000 tokens, prompt and completion alike: an estimate."""

    per_1k_tokens: float
    currency: str


@dataclass(frozen=True, slots=True)
class JudgePrice:
    """What the judge's model charges per million tokens, in the stats' currency; None: unknown."""

    input_per_mtok: float | None
    output_per_mtok: float | None

    def cost(self, totals: JudgeTotals) -> float | None:
        """What the upstream reported, plus the other calls at this price; None when a call's cost
        is unknown (a price of 0 says the model is free, not that its price is unknown)."""
        if not totals.unpriced_calls:
            return round(totals.reported_cost, 8)
        if self.input_per_mtok is None or self.output_per_mtok is None:
            return None
        priced = (
            totals.unpriced_prompt_tokens * self.input_per_mtok
            + totals.unpriced_completion_tokens * self.output_per_mtok
        ) / 1_000_000
        return round(totals.reported_cost + priced, 8)


class MemoryStats:
    def __init__(
        self,
        *,
        store: MemoryStore,
        lookups: LookupLog,
        hits: HitService,
        judgements: JudgementStore,
        judge: JudgeSwitch,
        judge_price: JudgePrice,
        price: Price,
        clock: Clock,
    ) -> None:
        self._store = store
        self._lookups = lookups
        self._hits = hits
        self._judgements = judgements
        self._judge_switch = judge
        self._judge_price = judge_price
        self._price = price
        self._clock = clock

    async def report(self, tenant: str, days: int) -> dict[str, Any]:
        totals = await self._store.lookup_totals(tenant)
        decided = sum(totals.by_decision[d] for d in DECISIONS)
        direct = totals.by_decision[Decision.DIRECT]
        by_status = await self._store.count_by(tenant, "status")
        return {
            "entries": {**by_status, "total": sum(by_status.values())},
            "entries_by_source": await self._store.count_by(tenant, "source"),
            "lookups": {"total": decided, **{d: totals.by_decision[d] for d in DECISIONS}},
            "hit_rate": round(direct / decided, 4) if decided else 0.0,
            "llm_calls_avoided": direct,
            "tokens_saved": totals.tokens_saved,
            "cost_avoided": {
                "amount": round(totals.tokens_saved / 1000 * self._price.per_1k_tokens, 4),
                "currency": self._price.currency,
                "price_per_1k_tokens": self._price.per_1k_tokens,
            },
            "timeline": await self._timeline(tenant, days),
            "served": await self._hits.stats(tenant),
            "judge": await self._judge(tenant),
        }

    async def _timeline(self, tenant: str, days: int) -> list[dict[str, Any]]:
        """One point per UTC day of the last `days`, today included, zeros where nothing happened."""
        now = self._clock().astimezone(UTC)
        start = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=days - 1)
        counted = await self._lookups.timeline(tenant, start)
        days_shown = ((start + timedelta(days=offset)).date().isoformat() for offset in range(days))
        return [{"day": day, **counted.get(day, dict.fromkeys(DECISIONS, 0))} for day in days_shown]

    async def _judge(self, tenant: str) -> dict[str, Any]:
        """What the LLM judge cost: its calls stay counted after it is switched off."""
        totals = await self._judgements.totals(tenant)
        return {
            "enabled": self._judge_switch.on,
            "why": self._judge_switch.why,
            "calls": totals.calls,
            "failed": totals.failed,
            "prompt_tokens": totals.prompt_tokens,
            "completion_tokens": totals.completion_tokens,
            "cost": self._judge_price.cost(totals),
            "currency": self._price.currency,
        }
