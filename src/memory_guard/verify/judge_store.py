"""All SQL of the LLM judge's verdicts (table `judgements`, migration 0004)."""

from __future__ import annotations

from datetime import datetime

from memory_guard.core.clock import to_text
from memory_guard.db.database import Database
from memory_guard.verify.judge import Judgement, JudgeTotals


class SqliteJudgementStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, tenant: str, entry_id: int, entry_key: str, question_key: str) -> Judgement | None:
        row = await self._db.fetch_one(
            "SELECT serves, reason, model, prompt_tokens, completion_tokens FROM judgements "
            "WHERE tenant = ? AND entry_id = ? AND entry_key = ? AND question_key = ?",
            (tenant, entry_id, entry_key, question_key),
        )
        if row is None:
            return None
        return Judgement(
            serves=bool(row["serves"]),
            reason=row["reason"],
            model=row["model"],
            prompt_tokens=row["prompt_tokens"],
            completion_tokens=row["completion_tokens"],
        )

    async def put(
        self,
        tenant: str,
        entry_id: int,
        entry_key: str,
        question_key: str,
        judgement: Judgement,
        now: datetime,
    ) -> None:
        # Two lookups judging the same pair at once both pay; the later verdict simply wins.
        await self._db.execute(
            "INSERT OR REPLACE INTO judgements (tenant, entry_id, entry_key, question_key, serves, reason, "
            "model, prompt_tokens, completion_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                tenant,
                entry_id,
                entry_key,
                question_key,
                int(judgement.serves),
                judgement.reason,
                judgement.model,
                judgement.prompt_tokens,
                judgement.completion_tokens,
                to_text(now),
            ),
        )

    async def totals(self, tenant: str) -> JudgeTotals:
        row = await self._db.fetch_one(
            "SELECT COUNT(*) AS calls, COALESCE(SUM(prompt_tokens), 0) AS prompt, "
            "COALESCE(SUM(completion_tokens), 0) AS completion FROM judgements WHERE tenant = ?",
            (tenant,),
        )
        assert row is not None  # an aggregate always yields one row
        return JudgeTotals(
            calls=row["calls"], prompt_tokens=row["prompt"], completion_tokens=row["completion"]
        )
