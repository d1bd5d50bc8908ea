"""The lookup log for staff (one entry's usage, decisions day by day), and the reuse an assisted
lookup's LLM made of its grounding."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory_guard.core.clock import to_text
from memory_guard.core.decision import DECISIONS, Decision
from memory_guard.db.database import Database
from memory_guard.memory.lookups import EntryUsage, ReusedLookup

# What the entry was to the lookup.
_ROLES = {Decision.DIRECT.value: "served", Decision.ASSISTED.value: "grounding"}
_USED = ", ".join(f"'{decision}'" for decision in _ROLES)


class SqliteLookupLog:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def record_reuses(self, reuses: Sequence[ReusedLookup]) -> None:
        """Name the entry an assisted lookup's LLM reused, with the tokens it saved, inside the
        bookkeeping's transaction (queued after the lookup's own row). The variant that matched
        stays only when the reused entry is the one it belongs to (SQLite reads the old values)."""
        async with self._db.transaction() as conn:
            await conn.executemany(
                "UPDATE lookups SET tokens_saved = ?, "
                "variant_id = CASE WHEN entry_id = ? THEN variant_id END, entry_id = ? "
                "WHERE id = ? AND tenant = ? AND decision = 'assisted'",
                [(r.tokens_saved, r.entry_id, r.entry_id, r.lookup_id, r.tenant) for r in reuses],
            )

    async def usage(self, tenant: str, entry_id: int, recent: int = 20) -> EntryUsage:
        """The lookups this entry answered: served as is (`direct`) or given to the LLM as the best
        grounding (`assisted`), and the latest of them. A miss names its best candidate too, but
        that candidate was too far to be used: a miss is not usage, and is not listed."""
        used = f"entry_id = ? AND tenant = ? AND decision IN ({_USED})"
        counts = await self._db.fetch_all(
            f"SELECT decision, COUNT(*) AS n FROM lookups WHERE {used} GROUP BY decision", (entry_id, tenant)
        )
        rows = await self._db.fetch_all(
            f"SELECT id, created_at, decision, score, question FROM lookups WHERE {used} "
            "ORDER BY id DESC LIMIT ?",
            (entry_id, tenant, recent),
        )
        through = await self._db.fetch_one(
            "SELECT COUNT(*) AS n, COALESCE(SUM(review IS NOT NULL), 0) AS reviewed, "
            "COALESCE(SUM(review = 'wrong'), 0) AS wrong FROM lookups "
            "WHERE entry_id = ? AND tenant = ? AND decision = 'direct' AND variant_id IS NOT NULL",
            (entry_id, tenant),
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
                    "role": _ROLES[row["decision"]],
                    "score": row["score"],
                    "question": row["question"],
                }
                for row in rows
            ],
            (through["n"], through["reviewed"], through["wrong"]) if through else (0, 0, 0),
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
