"""Served answers turned into a measured wrong-answer rate.

Every `direct` answer is logged with its score and verdict. Client feedback on a served
answer and staff reviews mark it right or wrong; the rate of wrong answers among the reviewed
ones, with its Wilson 95% interval, is the figure that says whether the thresholds hold.
Reviews are a sample chosen by people, not at random: the interval bounds the reviewed hits.
"""

from __future__ import annotations

from typing import Any, Literal

from memory_guard.core.clock import Clock
from memory_guard.core.errors import NotFound
from memory_guard.core.paging import cut_page
from memory_guard.hits.accuracy import wilson_interval
from memory_guard.hits.floors import ScopeFloors
from memory_guard.hits.store import HitStore, Review, ServedHit


class HitService:
    def __init__(self, store: HitStore, clock: Clock, floors: ScopeFloors | None = None) -> None:
        self.store = store
        self._clock = clock
        self._floors = floors

    async def load_floors(self) -> None:
        """Learn every scope's floor from the reviews stored so far (at start)."""
        if self._floors is not None:
            self._floors.learn_all(await self.store.reviewed_scores())

    async def review(self, tenant: str, lookup_id: int, correct: bool, by: str) -> None:
        review: Review = "right" if correct else "wrong"
        if not await self.store.review(tenant, lookup_id, review, by, self._clock()):
            raise NotFound(f"no served answer {lookup_id}", code="served_hit_not_found")
        if self._floors is not None and (scope := await self.store.scope_of(tenant, lookup_id)):
            reviews = await self.store.reviewed_scores(scope)
            self._floors.learn(scope, [(score, wrong) for _, score, wrong in reviews])

    async def page(
        self, tenant: str, review: Review | Literal["none"] | None, limit: int, before: int | None
    ) -> tuple[list[ServedHit], int | None]:
        rows = await self.store.served_hits(tenant, review, limit + 1, before)
        return cut_page(rows, limit, lambda hit: hit.lookup_id)

    async def stats(self, tenant: str) -> dict[str, Any]:
        totals = await self.store.served_totals(tenant)
        return {
            "total": totals.served,
            "exact": totals.exact,
            "verified": totals.served - totals.exact,
            "by_verdict": totals.by_verdict,
            **_accuracy(totals.reviewed, totals.wrong),
            "raised_floors": [f.to_public() for f in self._floors.raised(tenant)] if self._floors else [],
            # Wordings learned by the service serve under their own rules: their accuracy apart.
            "through_variants": {
                "total": totals.variant_served,
                **_accuracy(totals.variant_reviewed, totals.variant_wrong),
            },
        }


def _accuracy(reviewed: int, wrong: int) -> dict[str, Any]:
    rate = wrong / reviewed if reviewed else None
    low, high = wilson_interval(wrong, reviewed)
    return {
        "reviewed": reviewed,
        "wrong": wrong,
        "wrong_rate": None if rate is None else round(rate, 4),
        "wrong_rate_ci95": [round(low, 4), round(high, 4)] if reviewed else None,
    }
