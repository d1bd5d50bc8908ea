"""The lookup log: one row per guard decision, the ground truth of the stats."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory_guard.clock import to_text
from memory_guard.db.database import Database
from memory_guard.memory.entry import Scope


@dataclass(frozen=True, slots=True)
class LookupRecord:
    scope: Scope
    decision: str
    entry_id: int | None
    score: float | None
    tokens_saved: int


@dataclass(frozen=True, slots=True)
class LookupTotals:
    by_decision: dict[str, int]
    tokens_saved: int


class LookupLog:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(self, record: LookupRecord, now: datetime) -> None:
        scope = record.scope
        await self._db.execute(
            "INSERT INTO lookups (tenant, agent, project, phase, decision, entry_id, score, tokens_saved, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                scope.tenant,
                scope.agent,
                scope.project,
                scope.phase,
                record.decision,
                record.entry_id,
                record.score,
                record.tokens_saved,
                to_text(now),
            ),
        )

    async def totals(self, tenant: str) -> LookupTotals:
        rows = await self._db.fetch_all(
            "SELECT decision, COUNT(*) AS n, COALESCE(SUM(tokens_saved), 0) AS saved FROM lookups "
            "WHERE tenant = ? GROUP BY decision",
            (tenant,),
        )
        counts = {"direct": 0, "assisted": 0, "miss": 0, "skipped": 0}
        counts.update({row["decision"]: row["n"] for row in rows})
        return LookupTotals(by_decision=counts, tokens_saved=sum(row["saved"] for row in rows))
