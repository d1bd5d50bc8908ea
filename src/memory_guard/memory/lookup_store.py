"""Reads of the lookup log for staff: one entry's usage, and decisions day by day."""

from __future__ import annotations

from datetime import datetime

from memory_guard.clock import to_text
from memory_guard.db.database import Database
from memory_guard.memory.lookups import DECISIONS, EntryUsage


class SqliteLookupLog:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def usage(self, tenant: str, entry_id: int, recent: int = 20) -> EntryUsage:
        """The decisions this entry was the best match of, and the latest of them."""
        counts = await self._db.fetch_all(
            "SELECT decision, COUNT(*) AS n FROM lookups WHERE entry_id = ? AND tenant = ? GROUP BY decision",
            (entry_id, tenant),
        )
        rows = await self._db.fetch_all(
            "SELECT id, created_at, decision, score, question FROM lookups "
            "WHERE entry_id = ? AND tenant = ? ORDER BY id DESC LIMIT ?",
            (entry_id, tenant, recent),
        )
        by_decision = {decision: 0 for decision in DECISIONS}
        by_decision.update({row["decision"]: row["n"] for row in counts})
        return EntryUsage(
            by_decision,
            [
                {
                    "lookup_id": row["id"],
                    "at": row["created_at"],
                    "decision": row["decision"],
                    "score": row["score"],
                    "question": row["question"],
                }
                for row in rows
            ],
        )

    async def timeline(self, tenant: str, since: datetime) -> dict[str, dict[str, int]]:
        """Decisions per UTC day from `since` on; days without a lookup are absent."""
        rows = await self._db.fetch_all(
            "SELECT substr(created_at, 1, 10) AS day, decision, COUNT(*) AS n FROM lookups "
            "WHERE tenant = ? AND created_at >= ? GROUP BY day, decision",
            (tenant, to_text(since)),
        )
        days: dict[str, dict[str, int]] = {}
        for row in rows:
            days.setdefault(row["day"], dict.fromkeys(DECISIONS, 0))[row["decision"]] = row["n"]
        return days
