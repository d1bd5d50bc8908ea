"""All SQL of an import's unseen rows: publishing them at once, or removing them.

An import writes its entries and their audit events in chunks marked `pending_import` (see
`SqliteMemoryStore.insert_many`); nothing reads a marked row. These are the only statements
that touch them afterwards.
"""

from __future__ import annotations

from typing import Protocol

from memory_guard.db.database import Database


class ImportStaging(Protocol):
    async def publish(self, pending: str) -> None:
        """Make every row the import wrote (and their audit events) visible at once."""
        ...

    async def discard(self, pending: str) -> int:
        """Remove every row an unfinished import wrote; how many entries."""
        ...

    async def unfinished(self) -> list[str]:
        """The imports with rows written and not published (one running, or one that crashed)."""
        ...


class SqliteImportStaging:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def publish(self, pending: str) -> None:
        async with self._db.transaction() as conn:
            await conn.execute(
                "UPDATE responses SET pending_import = NULL WHERE pending_import = ?", (pending,)
            )
            await conn.execute(
                "UPDATE audit_events SET pending_import = NULL WHERE pending_import = ?", (pending,)
            )

    async def discard(self, pending: str) -> int:
        async with self._db.transaction() as conn:
            cursor = await conn.execute("DELETE FROM responses WHERE pending_import = ?", (pending,))
            await conn.execute("DELETE FROM audit_events WHERE pending_import = ?", (pending,))
            return cursor.rowcount

    async def unfinished(self) -> list[str]:
        rows = await self._db.fetch_all(
            "SELECT DISTINCT pending_import FROM responses WHERE pending_import IS NOT NULL "
            "UNION SELECT DISTINCT pending_import FROM audit_events WHERE pending_import IS NOT NULL"
        )
        return [row["pending_import"] for row in rows]
