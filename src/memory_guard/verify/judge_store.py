"""All SQL of the LLM judge: its cached verdicts (table `judgements`, migration 0004) and the
ledger of its calls (table `judge_calls`, migration 0009_judge_calls).

One text per query for SQLite and PostgreSQL (docs/DEVELOPMENT.md, "PostgreSQL backend"): an
upsert instead of `INSERT OR REPLACE`, `COUNT(*) FILTER (WHERE ...)` instead of summing
conditions, and sums of integers cast back to integers (PostgreSQL's SUM of a BIGINT is NUMERIC).
"""

from __future__ import annotations

from datetime import datetime

from memory_guard.core.clock import to_text
from memory_guard.db.backend import Backend, Connection
from memory_guard.verify.judge import JudgeCall, Judgement, JudgeTotals


class SqlJudgementStore:
    def __init__(self, db: Backend) -> None:
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
            # later verdict simply wins, whichever replica wrote the first.
            await conn.execute(
                "INSERT INTO judgements (tenant, entry_id, entry_key, question_key, serves, "
                "reason, model, prompt_tokens, completion_tokens, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tenant, entry_id, entry_key, question_key) DO UPDATE SET "
                "serves = excluded.serves, reason = excluded.reason, model = excluded.model, "
                "prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens, "
                "created_at = excluded.created_at",
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
            "SELECT COUNT(*) AS calls, COUNT(*) FILTER (WHERE outcome = 'failed') AS failed, "
            "CAST(COALESCE(SUM(prompt_tokens), 0) AS BIGINT) AS prompt, "
            "CAST(COALESCE(SUM(completion_tokens), 0) AS BIGINT) AS completion, "
            "COALESCE(SUM(cost), 0.0) AS cost, "
            "COUNT(*) FILTER (WHERE cost IS NULL AND outcome <> 'failed') AS unpriced, "
            "CAST(COALESCE(SUM(prompt_tokens) FILTER (WHERE cost IS NULL), 0) AS BIGINT) AS unpriced_prompt, "
            "CAST(COALESCE(SUM(completion_tokens) FILTER (WHERE cost IS NULL), 0) AS BIGINT) "
            "AS unpriced_completion FROM judge_calls WHERE tenant = ?",
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


async def _count(conn: Connection, tenant: str, call: JudgeCall, now: datetime) -> None:
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
