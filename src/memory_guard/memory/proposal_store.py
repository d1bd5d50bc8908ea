"""All SQL of client proposals (`feedback_proposals`), on SQLite."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

from memory_guard.core.clock import from_text, to_text
from memory_guard.db.database import Database, Row
from memory_guard.memory.entry import Entry, Status
from memory_guard.memory.entry_rows import COLUMNS, row_to_entry
from memory_guard.memory.proposal import Proposal, ProposalKind, ProposalStatus

# The proposal with the entry as it is now (LEFT JOIN: a deleted entry leaves NULLs).
_SELECT = (
    "SELECT p.id, p.tenant, p.entry_id, p.conversation_id, p.message_id, p.kind, p.proposed_answer, "
    "p.base_question, p.base_answer, p.base_status, p.proposed_by, p.created_at, p.status, "
    "p.decided_by, p.decided_at, p.reason, p.audit_event_id, "
    + ", ".join(f"r.{name} AS r_{name}" for name in COLUMNS.split(", "))
    + " FROM feedback_proposals p LEFT JOIN responses r ON r.id = p.entry_id AND r.tenant = p.tenant"
)


def _current(row: Row) -> Entry | None:
    return None if row["r_id"] is None else row_to_entry(row, prefix="r_")


def _proposal(row: Row) -> Proposal:
    return Proposal(
        id=row["id"],
        tenant=row["tenant"],
        entry_id=row["entry_id"],
        conversation_id=row["conversation_id"],
        message_id=row["message_id"],
        kind=ProposalKind(row["kind"]),
        proposed_answer=row["proposed_answer"],
        base_question=row["base_question"],
        base_answer=row["base_answer"],
        base_status=Status(row["base_status"]),
        proposed_by=row["proposed_by"],
        created_at=from_text(row["created_at"]),
        status=ProposalStatus(row["status"]),
        decided_by=row["decided_by"],
        decided_at=from_text(row["decided_at"]) if row["decided_at"] else None,
        reason=row["reason"],
        audit_event_id=row["audit_event_id"],
        current=_current(row),
    )


class SqliteProposalStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def atomic(self) -> AbstractAsyncContextManager[Any]:
        # The database's transactions join the one their task already holds: the entry store's
        # writes made inside this one commit with the proposal's.
        return self._db.transaction()

    async def add(self, proposal: Proposal) -> int:
        async with self._db.transaction() as conn:
            # The same feedback sent twice (a double click, a retry) makes one proposal, not two.
            async with conn.execute(
                "SELECT id FROM feedback_proposals WHERE tenant = ? AND message_id = ? AND entry_id = ? "
                "AND status = 'pending' AND kind = ? AND proposed_answer IS ?",
                (
                    proposal.tenant,
                    proposal.message_id,
                    proposal.entry_id,
                    proposal.kind.value,
                    proposal.proposed_answer,
                ),
            ) as cursor:
                known = await cursor.fetchone()
            if known is not None:
                return int(known["id"])
            cursor = await conn.execute(
                "INSERT INTO feedback_proposals (tenant, entry_id, conversation_id, message_id, kind, "
                "proposed_answer, base_question, base_answer, base_status, proposed_by, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    proposal.tenant,
                    proposal.entry_id,
                    proposal.conversation_id,
                    proposal.message_id,
                    proposal.kind.value,
                    proposal.proposed_answer,
                    proposal.base_question,
                    proposal.base_answer,
                    proposal.base_status.value,
                    proposal.proposed_by,
                    to_text(proposal.created_at),
                ),
            )
            assert cursor.lastrowid is not None
            return cursor.lastrowid

    async def get(self, tenant: str, proposal_id: int) -> Proposal | None:
        row = await self._db.fetch_one(f"{_SELECT} WHERE p.id = ? AND p.tenant = ?", (proposal_id, tenant))
        return _proposal(row) if row else None

    async def page(
        self, tenant: str, status: ProposalStatus | None, limit: int, before_id: int | None
    ) -> list[Proposal]:
        """Newest first; `before_id` is the cursor (ids only grow)."""
        clauses: list[str] = ["p.tenant = ?"]
        params: list[Any] = [tenant]
        if status is not None:
            clauses.append("p.status = ?")
            params.append(status.value)
        if before_id is not None:
            clauses.append("p.id < ?")
            params.append(before_id)
        rows = await self._db.fetch_all(
            f"{_SELECT} WHERE {' AND '.join(clauses)} ORDER BY p.id DESC LIMIT ?", (*params, limit)
        )
        return [_proposal(row) for row in rows]

    async def decide(
        self,
        tenant: str,
        proposal_id: int,
        status: ProposalStatus,
        by: str,
        now: datetime,
        reason: str | None = None,
    ) -> bool:
        async with self._db.transaction() as conn:
            cursor = await conn.execute(
                "UPDATE feedback_proposals SET status = ?, decided_by = ?, decided_at = ?, reason = ?, "
                "audit_event_id = (SELECT MAX(id) FROM audit_events WHERE tenant = ? AND proposal_id = ?) "
                "WHERE id = ? AND tenant = ? AND status = 'pending'",
                (status.value, by, to_text(now), reason, tenant, proposal_id, proposal_id, tenant),
            )
            return cursor.rowcount > 0
