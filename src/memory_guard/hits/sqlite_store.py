"""All SQL of the served-hit log: the `direct` rows of the lookup log and their reviews."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from memory_guard.core.clock import to_text
from memory_guard.core.decision import Decision
from memory_guard.core.scope import Scope
from memory_guard.core.verdict import Verdict
from memory_guard.db.database import Database
from memory_guard.hits.store import Review, ServedHit, ServedTotals

_DIRECT = f"decision = '{Decision.DIRECT.value}'"
_SERVED = f"tenant = ? AND {_DIRECT}"
_SERVED_L = f"l.tenant = ? AND l.{_DIRECT}"
_NOT_EXACT = f"verdict IS NOT '{Verdict.EXACT.value}'"  # NULL (verifier off) included


class SqliteHitStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def review(self, tenant: str, lookup_id: int, review: Review, by: str, now: datetime) -> bool:
        changed = await self._db.execute(
            f"UPDATE lookups SET review = ?, reviewed_by = ?, reviewed_at = ? WHERE id = ? AND {_SERVED}",
            (review, by, to_text(now), lookup_id, tenant),
        )
        return changed > 0

    async def served_hits(
        self, tenant: str, review: Review | Literal["none"] | None, limit: int, before: int | None
    ) -> list[ServedHit]:
        where, params = [_SERVED_L], [tenant]
        if review == "none":
            where.append("l.review IS NULL")
        elif review is not None:
            where.append("l.review = ?")
            params.append(review)
        if before is not None:
            where.append("l.id < ?")
            params.append(str(before))
        # The entry as it is now (gone when deleted since): what a reviewer judges the question against.
        rows = await self._db.fetch_all(
            "SELECT l.id, l.question, l.entry_id, l.score, l.verdict, l.reason, l.verified_by, l.review, "
            "l.reviewed_by, l.created_at, r.question AS entry_question, r.answer AS entry_answer, "
            "r.updated_at AS entry_updated_at FROM lookups AS l "
            "LEFT JOIN responses AS r ON r.id = l.entry_id AND r.tenant = l.tenant "
            f"WHERE {' AND '.join(where)} ORDER BY l.id DESC LIMIT ?",
            (*params, limit),
        )
        return [
            ServedHit(
                lookup_id=row["id"],
                question=row["question"],
                entry_id=row["entry_id"],
                score=row["score"],
                verdict=row["verdict"],
                reason=row["reason"],
                verified_by=row["verified_by"],
                review=row["review"],
                reviewed_by=row["reviewed_by"],
                created_at=row["created_at"],
                entry_question=row["entry_question"],
                answer=row["entry_answer"],
                # Text order is time order (clock.to_text): edited after it was served.
                entry_changed=(row["entry_updated_at"] or "") > row["created_at"],
            )
            for row in rows
        ]

    async def served_totals(self, tenant: str) -> ServedTotals:
        rows = await self._db.fetch_all(
            "SELECT COALESCE(verdict, 'none') AS verdict, COUNT(*) AS n, "
            "SUM(review IS NOT NULL) AS reviewed, SUM(review = 'wrong') AS wrong, "
            "SUM(variant_id IS NOT NULL) AS v_n, "
            "SUM(variant_id IS NOT NULL AND review IS NOT NULL) AS v_reviewed, "
            "SUM(variant_id IS NOT NULL AND review = 'wrong') AS v_wrong "
            f"FROM lookups WHERE {_SERVED} GROUP BY verdict",
            (tenant,),
        )
        by_verdict = {row["verdict"]: row["n"] for row in rows}
        return ServedTotals(
            served=sum(by_verdict.values()),
            exact=by_verdict.get(Verdict.EXACT.value, 0),
            reviewed=sum(row["reviewed"] or 0 for row in rows),
            wrong=sum(row["wrong"] or 0 for row in rows),
            by_verdict=by_verdict,
            variant_served=sum(row["v_n"] or 0 for row in rows),
            variant_reviewed=sum(row["v_reviewed"] or 0 for row in rows),
            variant_wrong=sum(row["v_wrong"] or 0 for row in rows),
        )

    async def reviewed_scores(self, scope: Scope | None = None) -> list[tuple[Scope, float, bool]]:
        """(scope, score, wrong) of every reviewed non-exact served answer, of one scope or all."""
        where = f"{_DIRECT} AND {_NOT_EXACT} AND review IS NOT NULL AND score IS NOT NULL"
        params: tuple[str, ...] = ()
        if scope is not None:
            where += " AND tenant = ? AND agent = ? AND project = ? AND phase = ?"
            params = (scope.tenant, scope.agent, scope.project, scope.phase)
        rows = await self._db.fetch_all(
            f"SELECT tenant, agent, project, phase, score, review FROM lookups WHERE {where}", params
        )
        return [
            (
                Scope(row["tenant"], row["agent"], row["project"], row["phase"]),
                row["score"],
                row["review"] == "wrong",
            )
            for row in rows
        ]

    async def scope_of(self, tenant: str, lookup_id: int) -> Scope | None:
        row = await self._db.fetch_one(
            "SELECT agent, project, phase FROM lookups WHERE id = ? AND tenant = ?", (lookup_id, tenant)
        )
        return Scope(tenant, row["agent"], row["project"], row["phase"]) if row else None
