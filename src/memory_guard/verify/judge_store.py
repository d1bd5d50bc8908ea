"""All SQL of the LLM judge: its cached verdicts (table `judgements`, migration 0004) and the
ledger of its calls (table `judge_calls`, migration 0009_judge_calls)."""

from __future__ import annotations

from datetime import datetime

import aiosqlite

from memory_guard.core.clock import to_text
from memory_guard.db.database import Database
from memory_guard.verify.judge import JudgeCall, Judgement, JudgeTotals


class SqliteJudgementStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, tenant: str, entry_id: int, entry_key: str, question_key: str) -> Judgement | None:
        row = await self._db.fetch_one(
            "SELECT serves, reason FROM judgements "
            "WHERE tenant = ? AND entry_id = ? AND entry_key = ? AND question_key = ?",
            (tenant, entry_id, entry_key, question_key),
        )
        if row is None:
            return None
        return Judgement(serves=bool(row["serves"]), reason=row["reason"])

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
        async with self._db.transaction() as conn:
            # Two lookups judging the same pair at once both pay (both calls are counted); the
            # later verdict simply wins.
            await conn.execute(
                "INSERT OR REPLACE INTO judgements (tenant, entry_id, entry_key, question_key, serves, "
                "reason, model, prompt_tokens, completion_tokens, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    tenant,
                    entry_id,
                    entry_key,
                    question_key,
                    int(judgement.serves),
                    judgement.reason,
                    call.model,
                    call.prompt_tokens,
                    call.completion_tokens,
                    to_text(now),
                ),
            )
            await _count(conn, tenant, call, now)

    async def count(self, tenant: str, call: JudgeCall, now: datetime) -> None:
        async with self._db.transaction() as conn:
            await _count(conn, tenant, call, now)

    async def totals(self, tenant: str) -> JudgeTotals:
        row = await self._db.fetch_one(
            "SELECT COUNT(*) AS calls, COALESCE(SUM(outcome = 'failed'), 0) AS failed, "
            "COALESCE(SUM(prompt_tokens), 0) AS prompt, COALESCE(SUM(completion_tokens), 0) AS completion, "
            "COALESCE(SUM(cost), 0.0) AS cost, "
            "COALESCE(SUM(cost IS NULL AND outcome != 'failed'), 0) AS unpriced, "
            "COALESCE(SUM(CASE WHEN cost IS NULL THEN prompt_tokens END), 0) AS unpriced_prompt, "
            "COALESCE(SUM(CASE WHEN cost IS NULL THEN completion_tokens END), 0) AS unpriced_completion "
            "FROM judge_calls WHERE tenant = ?",
            (tenant,),
        )
        assert row is not None  # an aggregate always yields one row
        return JudgeTotals(
            calls=row["calls"],
            failed=row["failed"],
            prompt_tokens=row["prompt"],
            completion_tokens=row["completion"],
            reported_cost=row["cost"],
            unpriced_calls=row["unpriced"],
            unpriced_prompt_tokens=row["unpriced_prompt"],
            unpriced_completion_tokens=row["unpriced_completion"],
        )


async def _count(conn: aiosqlite.Connection, tenant: str, call: JudgeCall, now: datetime) -> None:
    await conn.execute(
        "INSERT INTO judge_calls (tenant, model, outcome, prompt_tokens, completion_tokens, cost, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            tenant,
            call.model,
            call.outcome,
            call.prompt_tokens,
            call.completion_tokens,
            call.cost,
            to_text(now),
        ),
    )
