"""All SQL of the audit trail (`audit_events`). Events are written inside the entry store's
own transactions, through `write_event`; `SqliteAuditLog` reads them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import aiosqlite

from memory_guard.core.clock import from_text, to_text
from memory_guard.db.database import Database, Row
from memory_guard.memory.audit import CONTENT_FIELDS, SNAPSHOT_FIELDS, Action, AuditEvent, Change


def snapshot(row: Row) -> dict[str, Any]:
    """An entry as an event keeps it, from its `responses` row."""
    kept = {name: row[name] for name in SNAPSHOT_FIELDS}
    kept["tags"] = json.loads(kept["tags"])
    kept["metadata"] = json.loads(kept["metadata"])
    return kept


async def write_event(
    conn: aiosqlite.Connection,
    tenant: str,
    entry_id: int,
    change: Change,
    before: Row | None,
    after: Row | None,
    now: datetime,
) -> None:
    action = change.action
    if action is Action.EDIT and before is not None and after is not None and _same_content(before, after):
        action = Action.REFRESH  # the trail never shows a modification that modified nothing
    await conn.execute(
        "INSERT INTO audit_events (tenant, entry_id, at, actor, action, before, after, proposal_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            tenant,
            entry_id,
            to_text(now),
            change.actor,
            action.value,
            json.dumps(snapshot(before), ensure_ascii=False) if before is not None else None,
            json.dumps(snapshot(after), ensure_ascii=False) if after is not None else None,
            change.proposal_id,
        ),
    )


def _same_content(before: Row, after: Row) -> bool:
    return all(before[name] == after[name] for name in CONTENT_FIELDS)


def _event(row: Row) -> AuditEvent:
    return AuditEvent(
        id=row["id"],
        entry_id=row["entry_id"],
        at=from_text(row["at"]),
        actor=row["actor"],
        action=Action(row["action"]),
        before=json.loads(row["before"]) if row["before"] is not None else None,
        after=json.loads(row["after"]) if row["after"] is not None else None,
        proposal_id=row["proposal_id"],
    )


class SqliteAuditLog:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def event(self, tenant: str, event_id: int) -> AuditEvent | None:
        row = await self._db.fetch_one(
            "SELECT id, entry_id, at, actor, action, before, after, proposal_id FROM audit_events "
            "WHERE id = ? AND tenant = ? AND pending_import IS NULL",  # an unfinished import's are unseen
            (event_id, tenant),
        )
        return _event(row) if row else None

    async def events(
        self,
        tenant: str,
        *,
        entry_id: int | None = None,
        actions: Sequence[Action] = (),
        limit: int = 50,
        before_id: int | None = None,
    ) -> list[AuditEvent]:
        """Newest first; `before_id` is the cursor (ids only grow)."""
        clauses: list[str] = ["tenant = ?", "pending_import IS NULL"]  # an unfinished import's are unseen
        params: list[Any] = [tenant]
        if entry_id is not None:
            clauses.append("entry_id = ?")
            params.append(entry_id)
        if actions:
            clauses.append(f"action IN ({','.join('?' for _ in actions)})")
            params.extend(action.value for action in actions)
        if before_id is not None:
            clauses.append("id < ?")
            params.append(before_id)
        rows = await self._db.fetch_all(
            "SELECT id, entry_id, at, actor, action, before, after, proposal_id FROM audit_events "
            f"WHERE {' AND '.join(clauses)} ORDER BY id DESC LIMIT ?",
            (*params, limit),
        )
        return [_event(row) for row in rows]
